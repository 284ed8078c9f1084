"""The error tree moved to :mod:`toolreplay.errors` (public); kept for the modules still importing it here."""

from toolreplay.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConnectionFault,
    HistoryError,
    ImportFormatError,
    ProviderError,
    ProviderTimeout,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    StoreError,
    ToolreplayError,
    WireError,
)

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ConnectionFault",
    "HistoryError",
    "ImportFormatError",
    "ProviderError",
    "ProviderTimeout",
    "RateLimitError",
    "ResponseFormatError",
    "ServerError",
    "StoreError",
    "ToolreplayError",
    "WireError",
]
