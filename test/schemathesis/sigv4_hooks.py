"""Schemathesis hooks: sign every request with AWS Signature Version 4 (service execute-api).

The garden API is IAM-authorized. requests calls the auth object with the prepared request, so the
signature covers the exact method, path, query and body bytes that go on the wire.
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the region from
AWS_REGION.
"""
import datetime
import hashlib
import hmac
import os
import urllib.parse

import requests
import schemathesis


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="-_.~")


class SigV4Auth(requests.auth.AuthBase):
    def __init__(self, access_key: str, secret_key: str, region: str, token: str | None = None, service: str = "execute-api"):
        self.access_key, self.secret_key, self.region, self.token, self.service = access_key, secret_key, region, token, service

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        url = urllib.parse.urlsplit(request.url)
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode("utf-8")
        payload_hash = hashlib.sha256(body).hexdigest()
        request.headers["x-amz-date"] = amz_date
        request.headers["x-amz-content-sha256"] = payload_hash
        if self.token:
            request.headers["x-amz-security-token"] = self.token
        host = url.netloc
        signed = {"host": host, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash}
        if self.token:
            signed["x-amz-security-token"] = self.token
        names = sorted(signed)
        pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
        query = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in sorted(pairs))
        # Paths are signed as sent, each segment encoded once (API Gateway's rule for execute-api).
        path = "/".join(_quote(urllib.parse.unquote(seg)) for seg in (url.path or "/").split("/"))
        canonical = "\n".join([request.method, path, query, "".join(f"{n}:{signed[n].strip()}\n" for n in names), ";".join(names), payload_hash])
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
        key = _hmac(_hmac(_hmac(_hmac(("AWS4" + self.secret_key).encode("utf-8"), day), self.region), self.service), "aws4_request")
        signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        request.headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, SignedHeaders={';'.join(names)}, Signature={signature}"
        )
        return request


_AUTH = SigV4Auth(
    os.environ.get("AWS_ACCESS_KEY_ID", "test"),
    os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    os.environ.get("AWS_REGION", "eu-west-1"),
    os.environ.get("AWS_SESSION_TOKEN") or None,
)


# Schemathesis supplies this placeholder as the credential of the `sigv4` security scheme; requests that
# carry it are signed. Its negative authentication tests send no or another value: those stay unsigned,
# so the gateway (no header) or the handler (no authenticated caller) must refuse them.
PLACEHOLDER = "SIGV4-SIGNED-BY-HOOK"


@schemathesis.auth()
class SigV4Placeholder:
    def get(self, case, context):
        return PLACEHOLDER

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = data


@schemathesis.hook
def before_call(context, case, kwargs):
    if (case.headers or {}).get("Authorization") == PLACEHOLDER:
        kwargs["auth"] = _AUTH
