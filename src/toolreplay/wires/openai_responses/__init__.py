"""The openai_responses wire.

render.py: request bodies; response.py: answers and stream events; request.py: bodies back into a history.
"""
