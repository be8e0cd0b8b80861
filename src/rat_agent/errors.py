"""Typed errors: the CLI turns any of these into one readable line and a non-zero exit."""


class RatError(Exception):
    """Base class of every error rat-agent raises on purpose.

    Its message is masked of secrets when made (a provider may echo the key it was sent),
    so no printed, logged or checkpointed error carries one; made in a served user's run,
    it names no path on the server either.
    """

    exit_code = 1

    def __init__(self, *args: object) -> None:
        from rat_agent.redact import redact  # light (stdlib only); kept out of import time
        from rat_agent.served import scrub

        super().__init__(*(scrub(redact(a)) if isinstance(a, str) else a for a in args))


# The standard bases matter beyond Python: LangGraph Server shows the message of a
# ValueError or RuntimeError to the client, and hides any other as "internal error".


class ConfigError(RatError, ValueError):
    """Bad input or configuration: unknown retriever or model, missing key or package, bad range."""

    exit_code = 2


class ModelError(RatError, RuntimeError):
    """The chat model could not be started or reached, or replied with nothing usable."""

    exit_code = 3


class UnusableReply(ModelError):
    """The model answered with nothing usable (an empty draft or answer): asking the same
    prompt again is not retried, as a small model at temperature 0 says the same."""


class RequestRejected(ModelError):
    """The provider refused the request (HTTP 4xx other than 408 and 429: a bad key, a bad
    model name, a prompt too long): retrying cannot fix it."""


class RetrievalError(RatError, RuntimeError):
    """The knowledge source could not be built or queried."""

    exit_code = 4


class SourceUnavailable(RetrievalError):
    """The source still failed after its own retries; retrying the step would not help."""


class InternalError(RatError, RuntimeError):
    """An error not of the project's own making, in a served user's run: its text and trace
    stay in the server's log, and the user reads one line with an id to quote."""
