"""The admin API (``/adm/…``) for application servers: one method per endpoint, typed answers, and
failures as the BridgeError subclass that says how to handle them (errors.py).

Every POST carries an Idempotency-Key, made once per call (or given) and sent with each of its
retries, so that no retry can apply it twice. ``ENDPOINTS`` lists every operation with its OpenAPI
``operationId``: a test checks it against the document a running service serves.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, Mapping, Sequence, Union
from urllib.parse import quote

from . import types as t
from ._answers import expect_success
from ._settings import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_TIMEOUT_SECONDS,
    MASK,
    MAX_ANSWER_BYTES,
    MAX_ATTEMPTS,
    MAX_TIMEOUT_SECONDS,
    ApiKey,
    base_url_of,
    idempotency_key_of,
    number_in,
)
from ._transport import Transport, json_object


@dataclass(frozen=True)
class Endpoint:
    operation_id: str
    """The operation's ``operationId`` in the service's OpenAPI document."""
    method: Literal["GET", "POST", "DELETE"]
    path: str
    """As the document writes it: ``/adm/vip/{oId}``."""
    call: str
    """The client's method for it: ``vip.get`` is ``client.vip.get``."""
    answer: Any
    """The success body's type."""

    def path_with(self, values: Mapping[str, str]) -> str:
        path = self.path
        for name, value in values.items():
            path = path.replace("{" + name + "}", quote(value, safe=""))
        return path


POINTS_EDIT = Endpoint("postAdmPointsEdit", "POST", "/adm/points/edit", "points.edit", t.OperationAnswer)
MEDAL_GIVE = Endpoint("postAdmMedalGive", "POST", "/adm/medal/give", "medal.give", t.SuccessBody)
MEDAL_REMOVE = Endpoint("postAdmMedalRemove", "POST", "/adm/medal/remove", "medal.remove", t.SuccessBody)
ITEMS_QUERY = Endpoint("postAdmItemsQuery", "POST", "/adm/items/query", "items.query", t.ItemsBody)
ITEMS_EDIT = Endpoint("postAdmItemsEdit", "POST", "/adm/items/edit", "items.edit", t.SuccessBody)
LIVENESS_GET = Endpoint("getAdmLivenessOId", "GET", "/adm/liveness/{oId}", "liveness.get", t.LivenessBody)
VIP_GET = Endpoint("getAdmVipOId", "GET", "/adm/vip/{oId}", "vip.get", t.VipListBody)
VIP_SUBMIT = Endpoint("postAdmVipSubmit", "POST", "/adm/vip/submit", "vip.submit", t.VipSubmitAnswer)
VIP_BATCH_SUBMIT = Endpoint("postAdmVipBatchSubmit", "POST", "/adm/vip/batch-submit", "vip.batch_submit", t.VipBatchAnswer)
MESSAGE_PUSH = Endpoint("postAdmMessagePush", "POST", "/adm/message/push", "message.push", t.PushAnswer)
USER_GET = Endpoint("getAdmUserGet", "GET", "/adm/user/get", "user.get", t.UserGetAnswer)
OPERATIONS_LIST = Endpoint("getAdmOperations", "GET", "/adm/operations", "operations.list", t.OperationListAnswer)
OPERATIONS_RESOLVE = Endpoint("postAdmOperationsOperationIdResolve", "POST", "/adm/operations/{operationId}/resolve", "operations.resolve", t.ResolveAnswer)
AUDIT_POINTS = Endpoint("getAdmAuditPointsOId", "GET", "/adm/audit/points/{oId}", "audit.points", t.PointsAuditPage)
AUDIT_MEDALS = Endpoint("getAdmAuditMedalsOId", "GET", "/adm/audit/medals/{oId}", "audit.medals", t.MedalAuditPage)
AUDIT_ITEMS = Endpoint("getAdmAuditItemsOId", "GET", "/adm/audit/items/{oId}", "audit.items", t.ItemsAuditPage)
AUDIT_VIP = Endpoint("getAdmAuditVipOId", "GET", "/adm/audit/vip/{oId}", "audit.vip", t.VipAuditPage)
PRESENCE_LIST = Endpoint("getAdmPresence", "GET", "/adm/presence", "presence.list", t.PresencePage)
PRESENCE_GET = Endpoint("getAdmPresenceOId", "GET", "/adm/presence/{oId}", "presence.get", t.PresenceAnswer)
WEBHOOKS_REGISTER = Endpoint("postAdmWebhooks", "POST", "/adm/webhooks", "webhooks.register", t.WebhookCreated)
WEBHOOKS_LIST = Endpoint("getAdmWebhooks", "GET", "/adm/webhooks", "webhooks.list", t.WebhookList)
WEBHOOKS_GET = Endpoint("getAdmWebhooksId", "GET", "/adm/webhooks/{id}", "webhooks.get", t.WebhookAnswer)
WEBHOOKS_DELETE = Endpoint("deleteAdmWebhooksId", "DELETE", "/adm/webhooks/{id}", "webhooks.delete", t.WebhookDeletedAnswer)
WEBHOOKS_ROTATE = Endpoint("postAdmWebhooksIdRotate", "POST", "/adm/webhooks/{id}/rotate", "webhooks.rotate", t.WebhookRotated)
WEBHOOKS_DISABLE = Endpoint("postAdmWebhooksIdDisable", "POST", "/adm/webhooks/{id}/disable", "webhooks.disable", t.WebhookAnswer)
WEBHOOKS_ENABLE = Endpoint("postAdmWebhooksIdEnable", "POST", "/adm/webhooks/{id}/enable", "webhooks.enable", t.WebhookAnswer)
WEBHOOKS_ATTEMPTS = Endpoint("getAdmWebhooksIdAttempts", "GET", "/adm/webhooks/{id}/attempts", "webhooks.attempts", t.WebhookAttempts)
WEBHOOKS_RESEND = Endpoint("postAdmWebhooksIdEventsEventIdResend", "POST", "/adm/webhooks/{id}/events/{eventId}/resend", "webhooks.resend", t.WebhookResent)

ENDPOINTS: tuple[Endpoint, ...] = (
    POINTS_EDIT,
    MEDAL_GIVE,
    MEDAL_REMOVE,
    ITEMS_QUERY,
    ITEMS_EDIT,
    LIVENESS_GET,
    VIP_GET,
    VIP_SUBMIT,
    VIP_BATCH_SUBMIT,
    MESSAGE_PUSH,
    USER_GET,
    OPERATIONS_LIST,
    OPERATIONS_RESOLVE,
    AUDIT_POINTS,
    AUDIT_MEDALS,
    AUDIT_ITEMS,
    AUDIT_VIP,
    PRESENCE_LIST,
    PRESENCE_GET,
    WEBHOOKS_REGISTER,
    WEBHOOKS_LIST,
    WEBHOOKS_GET,
    WEBHOOKS_DELETE,
    WEBHOOKS_ROTATE,
    WEBHOOKS_DISABLE,
    WEBHOOKS_ENABLE,
    WEBHOOKS_ATTEMPTS,
    WEBHOOKS_RESEND,
)

CLIENT_NOT_FOUND = "Client not found or disconnected."
"""The message of ``/adm/user/get``'s own 404 body: no such client is connected."""

Expiry = Union[str, datetime]
"""UTC ``YYYY-MM-DD HH:MM:SS``, or a datetime that carries its time zone (sent to the second, in UTC)."""


class _Calls:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    def post(self, endpoint: Endpoint, body: Mapping[str, Any], idempotency_key: str | None, path: Mapping[str, str] | None = None) -> Any:
        key = idempotency_key_of(idempotency_key)
        sent = {name: value for name, value in body.items() if value is not None}
        answer, context = self.transport.send("POST", endpoint.path_with(path or {}), body=sent, idempotency_key=key)
        return expect_success(answer, context)

    def get(self, endpoint: Endpoint, path: Mapping[str, str] | None = None, query: Mapping[str, str | int | None] | None = None) -> Any:
        answer, context = self.transport.send("GET", endpoint.path_with(path or {}), query=query)
        return expect_success(answer, context)

    def delete(self, endpoint: Endpoint, path: Mapping[str, str]) -> Any:
        answer, context = self.transport.send("DELETE", endpoint.path_with(path))
        return expect_success(answer, context)


class Points:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def edit(self, o_id: str, point: int, memo: str, *, idempotency_key: str | None = None) -> t.OperationAnswer:
        """Adds (point > 0) or deducts (point < 0) points (``points:edit``). ``data.transactionId`` is the platform's transaction id."""
        return self._calls.post(POINTS_EDIT, {"oId": o_id, "point": point, "memo": memo}, idempotency_key)  # type: ignore[no-any-return]


class Medal:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def give(self, o_id: str, name: str, description: str, attr: str, data: str | None = None, *, idempotency_key: str | None = None) -> t.SuccessBody:
        """Gives a medal (``medal:give``); ``attr`` is ``url=<icon>&backcolor=<hex>&fontcolor=<hex>``."""
        return self._calls.post(MEDAL_GIVE, {"oId": o_id, "name": name, "description": description, "attr": attr, "data": data}, idempotency_key)  # type: ignore[no-any-return]

    def remove(self, o_id: str, name: str, *, idempotency_key: str | None = None) -> t.SuccessBody:
        """Removes a medal by name (``medal:remove``)."""
        return self._calls.post(MEDAL_REMOVE, {"oId": o_id, "name": name}, idempotency_key)  # type: ignore[no-any-return]


class Items:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def query(self, o_id: str, *, idempotency_key: str | None = None) -> t.ItemsBody:
        """The user's item bag, item name to quantity (``items:query``)."""
        return self._calls.post(ITEMS_QUERY, {"oId": o_id}, idempotency_key)  # type: ignore[no-any-return]

    def edit(self, o_id: str, item: str, sum: int, *, idempotency_key: str | None = None) -> t.SuccessBody:
        """Adds (sum > 0) or deducts (sum < 0) items (``items:edit``); a deduction the user cannot afford is a ConflictError, and nothing is sent."""
        return self._calls.post(ITEMS_EDIT, {"oId": o_id, "item": item, "sum": sum}, idempotency_key)  # type: ignore[no-any-return]


class Liveness:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def get(self, o_id: str) -> t.LivenessBody:
        """The user's liveness, a decimal number (``liveness:read``)."""
        return self._calls.get(LIVENESS_GET, {"oId": o_id})  # type: ignore[no-any-return]


class Vip:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def get(self, o_id: str) -> t.VipListBody:
        """The user's VIP records, svip first (``vip:read``)."""
        return self._calls.get(VIP_GET, {"oId": o_id})  # type: ignore[no-any-return]

    def submit(self, o_id: str, quality: t.VipQuality, expired: Expiry, *, idempotency_key: str | None = None) -> t.VipSubmitAnswer:
        """Grants a quality, or renews it (``vip:write``); an ``expired`` in the past ends the VIP."""
        return self._calls.post(VIP_SUBMIT, {"oId": o_id, "quality": quality, "expired": _expiry(expired, "expired")}, idempotency_key)  # type: ignore[no-any-return]

    def batch_submit(self, o_id: str, vips: Sequence[t.VipEntry], *, idempotency_key: str | None = None) -> t.VipBatchAnswer:
        """Several grants for one user at once, at most 100 (``vip:write``); ``data.failures`` names the entries not applied."""
        entries = [{**entry, "expired": _expiry(entry["expired"], f"vips[{n}].expired")} for n, entry in enumerate(vips)]
        return self._calls.post(VIP_BATCH_SUBMIT, {"oId": o_id, "vips": entries}, idempotency_key)  # type: ignore[no-any-return]


class Message:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def push(
        self, name: str, data: Mapping[str, Any], *, o_ids: Sequence[str] | None = None, user_ids: Sequence[str] | None = None, idempotency_key: str | None = None
    ) -> t.PushAnswer:
        """Pushes ``{app_id, name, data}`` to every open realtime connection of the users named by platform ``o_ids`` and/or
        this service's ``user_ids`` (``message:push``); ``data`` reports each id as online, offline or unknown."""
        body = {"oIds": None if o_ids is None else list(o_ids), "userIds": None if user_ids is None else list(user_ids), "name": name, "data": data}
        return self._calls.post(MESSAGE_PUSH, body, idempotency_key)  # type: ignore[no-any-return]


class User:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def get(self, client_id: str) -> t.UserGetAnswer | None:
        """Who is behind a realtime ``client_id`` (``user:get``); None when no such client is connected (it never was, or it left)."""
        answer, context = self._calls.transport.send("GET", USER_GET.path, query={"client_id": client_id})
        # The contract's own body for a client that is not connected: an answer, not a failure.
        if answer.status == 404 and json_object(answer.body).get("message") == CLIENT_NOT_FOUND:
            return None
        return expect_success(answer, context)  # type: ignore[no-any-return]


class Operations:
    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def list(self, *, status: Literal["unknown", "pending"] | None = None, search: str | None = None, limit: int | None = None) -> t.OperationListAnswer:
        """The operations whose outcome is not known, oldest first (``operations:resolve``): ``status`` one of them
        (default both), ``search`` text of a caller's Idempotency-Key, X-Request-Id or operation id, ``limit`` 1 to 500
        (default 50). Each with what its caller sent, so what a developer quotes finds it."""
        return self._calls.get(OPERATIONS_LIST, query={"status": status, "search": search, "limit": limit})  # type: ignore[no-any-return]

    def resolve(self, operation_id: str, applied: bool, note: str | None = None, *, idempotency_key: str | None = None) -> t.ResolveAnswer:
        """Records what someone found on the platform for a write whose outcome is unknown (``operations:resolve``).

        The original Idempotency-Key then answers success (applied) or OperationNotAppliedError. Only an unknown
        outcome can be resolved (ConflictError otherwise); an unknown ``operation_id`` is a NotFoundError.
        """
        return self._calls.post(OPERATIONS_RESOLVE, {"applied": applied, "note": note}, idempotency_key, {"operationId": operation_id})  # type: ignore[no-any-return]


class Audit:
    """A user's history from the service's own log, oldest first, ``limit`` entries (1 to 500, default 50) after or before a
    log position (a page's ``next`` / ``prev``); ``audit:read``."""

    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def points(self, o_id: str, *, limit: int | None = None, after: int | None = None, before: int | None = None) -> t.PointsAuditPage:
        return self._calls.get(AUDIT_POINTS, {"oId": o_id}, {"limit": limit, "after": after, "before": before})  # type: ignore[no-any-return]

    def medals(self, o_id: str, *, limit: int | None = None, after: int | None = None, before: int | None = None) -> t.MedalAuditPage:
        return self._calls.get(AUDIT_MEDALS, {"oId": o_id}, {"limit": limit, "after": after, "before": before})  # type: ignore[no-any-return]

    def items(self, o_id: str, *, limit: int | None = None, after: int | None = None, before: int | None = None) -> t.ItemsAuditPage:
        return self._calls.get(AUDIT_ITEMS, {"oId": o_id}, {"limit": limit, "after": after, "before": before})  # type: ignore[no-any-return]

    def vip(self, o_id: str, *, limit: int | None = None, after: int | None = None, before: int | None = None) -> t.VipAuditPage:
        return self._calls.get(AUDIT_VIP, {"oId": o_id}, {"limit": limit, "after": after, "before": before})  # type: ignore[no-any-return]


class Presence:
    """Who is online now on any live node (``presence:read``): every key with it sees every user, as realtime
    clients belong to no app."""

    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def list(self, *, limit: int | None = None, after: int | None = None, before: int | None = None) -> t.PresencePage:
        """The users online, online longest first, ``limit`` (1 to 500, default 50) after or before a ``position``
        (a page's ``next`` / ``prev``)."""
        return self._calls.get(PRESENCE_LIST, query={"limit": limit, "after": after, "before": before})  # type: ignore[no-any-return]

    def get(self, o_id: str) -> t.PresenceAnswer:
        """Whether one user is online, with ``clients`` and ``since``; a user the service never saw is offline."""
        return self._calls.get(PRESENCE_GET, {"oId": o_id})  # type: ignore[no-any-return]


class Webhooks:
    """The app's webhook endpoints (``webhooks:manage``): signed events about its players, POSTed to each at least
    once. A key reaches its own app's endpoints only, unless it was created for every app; another app's is a NotFoundError."""

    def __init__(self, calls: _Calls) -> None:
        self._calls = calls

    def register(
        self, url: str, events: Sequence[t.WebhookEventType], *, description: str | None = None, app_id: str | None = None, idempotency_key: str | None = None
    ) -> t.WebhookCreated:
        """Registers an endpoint; ``data.secret`` is its signing secret, in this answer only. ``app_id``: for a key created
        for every app, the app it is for."""
        body = {"url": url, "events": list(events), "description": description, "appId": app_id}
        return self._calls.post(WEBHOOKS_REGISTER, body, idempotency_key)  # type: ignore[no-any-return]

    def list(self, *, app_id: str | None = None) -> t.WebhookList:
        return self._calls.get(WEBHOOKS_LIST, query={"appId": app_id})  # type: ignore[no-any-return]

    def get(self, id: str) -> t.WebhookAnswer:  # noqa: A002 (the API's name)
        return self._calls.get(WEBHOOKS_GET, {"id": id})  # type: ignore[no-any-return]

    def delete(self, id: str) -> t.WebhookDeletedAnswer:  # noqa: A002 (the API's name)
        """Deletes it for good: nothing more is sent to it."""
        return self._calls.delete(WEBHOOKS_DELETE, {"id": id})  # type: ignore[no-any-return]

    def rotate(self, id: str, *, idempotency_key: str | None = None) -> t.WebhookRotated:  # noqa: A002 (the API's name)
        """A new signing secret (``data.secret``, in this answer only); the previous one also signs until ``data.previousValidUntil``."""
        return self._calls.post(WEBHOOKS_ROTATE, {}, idempotency_key, {"id": id})  # type: ignore[no-any-return]

    def disable(self, id: str, *, idempotency_key: str | None = None) -> t.WebhookAnswer:  # noqa: A002 (the API's name)
        return self._calls.post(WEBHOOKS_DISABLE, {}, idempotency_key, {"id": id})  # type: ignore[no-any-return]

    def enable(self, id: str, *, idempotency_key: str | None = None) -> t.WebhookAnswer:  # noqa: A002 (the API's name)
        return self._calls.post(WEBHOOKS_ENABLE, {}, idempotency_key, {"id": id})  # type: ignore[no-any-return]

    def attempts(self, id: str, *, limit: int | None = None) -> t.WebhookAttempts:  # noqa: A002 (the API's name)
        """The latest attempts, newest first (``limit`` 1 to 200, default 50)."""
        return self._calls.get(WEBHOOKS_ATTEMPTS, {"id": id}, {"limit": limit})  # type: ignore[no-any-return]

    def resend(self, id: str, event_id: str, *, idempotency_key: str | None = None) -> t.WebhookResent:  # noqa: A002 (the API's name)
        """Sends the event to the endpoint again now (same id and body); a ConflictError while an attempt of it is in progress."""
        return self._calls.post(WEBHOOKS_RESEND, {}, idempotency_key, {"id": id, "eventId": event_id})  # type: ignore[no-any-return]


class AdminClient:
    """The admin API of a community-bridge service.

    ``timeout`` (seconds, default 30) is one deadline per call: connecting, every attempt, the waits
    between them and reading the whole answer. ``max_attempts`` (default 3, at most 10; 1 turns
    retries off). ``max_answer_bytes`` (default 4 MiB) bounds an answer's body. ``ssl_context`` for
    https (default: the system's trusted certificates). Raises TypeError or ValueError, naming the
    option, for an option no call could succeed with. Safe to share between threads.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        base = base_url_of(base_url)
        key = ApiKey(api_key)
        seconds = float(number_in("timeout", timeout, 0.001, MAX_TIMEOUT_SECONDS, whole=False))
        attempts = int(number_in("max_attempts", max_attempts, 1, MAX_ATTEMPTS, whole=True))
        answer_bytes = int(number_in("max_answer_bytes", max_answer_bytes, 1, MAX_ANSWER_BYTES, whole=True))
        self._transport = Transport(base, key, seconds, attempts, answer_bytes, ssl_context)
        calls = _Calls(self._transport)
        self.points = Points(calls)
        self.medal = Medal(calls)
        self.items = Items(calls)
        self.liveness = Liveness(calls)
        self.vip = Vip(calls)
        self.message = Message(calls)
        self.user = User(calls)
        self.operations = Operations(calls)
        self.audit = Audit(calls)
        self.webhooks = Webhooks(calls)
        self.presence = Presence(calls)

    def __repr__(self) -> str:
        transport = self._transport
        return (
            f"AdminClient(base_url={transport.base.origin + transport.base.path!r}, api_key={MASK}, timeout={transport.timeout:g}, "
            f"max_attempts={transport.max_attempts}, max_answer_bytes={transport.max_answer_bytes})"
        )


def _expiry(value: Expiry, field: str) -> str:
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise ValueError(f"{field}: a datetime must carry its time zone, e.g. datetime(2027, 1, 1, tzinfo=timezone.utc)")
        return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return value
