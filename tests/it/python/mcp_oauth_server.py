"""An MCP server over Streamable HTTP that asks for OAuth, and its own authorization server, from
the Python MCP SDK (`mcp.server.auth`): protected-resource metadata, authorization-server
metadata, dynamic client registration, PKCE, refresh tokens, all the SDK's. The provider below
approves every sign-in at once (the test's "browser" follows the redirect) and keeps everything
in memory.

Usage: mcp_oauth_server.py EVENTS. Prints {"url": …} once it listens, appends one JSON line to
EVENTS for each sign-in, token, refresh and request to /mcp (its method, whether it carried a
bearer token, its body), and exits when its stdin closes (or after five minutes).
"""

import asyncio
import json
import os
import secrets
import socket
import sys
import threading
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer

EVENTS = sys.argv[1]


def event(**fields):
    with open(EVENTS, "a") as out:
        out.write(json.dumps(fields) + "\n")


class ApprovingProvider:
    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        event(event="register", redirect_uris=[str(u) for u in client_info.redirect_uris or []])

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        event(event="authorize", resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, code):
        return self.codes.get(code)

    def issue(self, client_id, scopes, resource):
        access = "access-" + secrets.token_urlsafe(16)
        refresh = "refresh-" + secrets.token_urlsafe(16)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, resource=resource,
            expires_at=int(time.time()) + 3600,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        from mcp.shared.auth import OAuthToken

        return OAuthToken(
            access_token=access, token_type="Bearer", expires_in=3600,
            refresh_token=refresh, scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(self, client, code):
        del self.codes[code.code]
        event(event="token")
        return self.issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        del self.refresh[refresh_token.token]
        event(event="refresh")
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        return self.access.get(token)

    async def revoke_token(self, token):
        self.access.pop(token.token, None)


def recording(app):
    """The app, with each request to /mcp noted: its method, its bearer token's presence, its body."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            return await app(scope, receive, send)
        headers = dict(scope["headers"])
        bearer = headers.get(b"authorization", b"").startswith(b"Bearer ")
        chunks = []

        async def receiving():
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    event(event="http", method=scope["method"], bearer=bearer,
                          body=b"".join(chunks).decode())
            return message

        if scope["method"] != "POST":
            event(event="http", method=scope["method"], bearer=bearer, body="")
            return await app(scope, receive, send)
        return await app(scope, receiving, send)

    return wrapped


def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    server = MCPServer(
        "oauth-test",
        auth_server_provider=ApprovingProvider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def echo(message: str) -> str:
        """Says the message back."""
        return f"Echo: {message}"

    app = recording(server.streamable_http_app())
    config = uvicorn.Config(app, log_level="warning")
    runner = uvicorn.Server(config)

    def stop_when_stdin_closes():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    threading.Timer(300, lambda: os._exit(0)).start()
    print(json.dumps({"url": f"{base}/mcp"}), flush=True)
    asyncio.run(runner.serve(sockets=[listener]))


if __name__ == "__main__":
    main()
