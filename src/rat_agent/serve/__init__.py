"""Serving RAT to many users (`make serve`): API keys and the server's auth handler."""
