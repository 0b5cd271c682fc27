"""The admin API's answers, as the service sends them (JSON keys unchanged), by the names its OpenAPI
document gives them. A test compares each with the document a running service serves."""

from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict, Union

VipQuality = Literal["vip", "svip"]
OutcomeStatus = Literal["applied", "rejected", "failed", "unknown", "pending"]


class VipEntry(TypedDict):
    """One grant of ``vip.batch_submit``: ``expired`` is UTC ``YYYY-MM-DD HH:MM:SS``, or a datetime with its time zone."""

    quality: VipQuality
    expired: Union[str, datetime]


class SuccessBody(TypedDict):
    code: Literal[0]
    msg: str
    """The platform's own message for points, medals and items; ``success`` otherwise."""


class TransactionData(TypedDict):
    transactionId: str


class OperationAnswer(SuccessBody):
    data: NotRequired[TransactionData]
    """Present when the platform's message names a transaction id (points edits)."""


class ItemsBody(SuccessBody):
    data: dict[str, int]
    """Item name to quantity."""


class LivenessBody(SuccessBody):
    liveness: float


class VipRecord(TypedDict):
    id: str
    userId: str
    quality: VipQuality
    expired: str
    created: str
    updated: str


class VipListBody(SuccessBody):
    data: list[VipRecord]
    """svip first, then vip."""


class VipSubmitAnswer(SuccessBody):
    data: VipRecord


class VipGranted(TypedDict):
    id: str
    userId: str
    quality: VipQuality
    expired: str


class VipFailure(TypedDict):
    index: int
    quality: Any
    expired: Any
    message: str


class VipBatchData(TypedDict):
    success: list[VipGranted]
    total: int
    succeed: int
    failed: int
    failures: list[VipFailure]


class VipBatchAnswer(SuccessBody):
    data: VipBatchData


class PushCounts(TypedDict):
    online: int
    offline: int
    unknown: int


class PushData(TypedDict):
    online: list[str]
    offline: list[str]
    unknown: list[str]
    counts: NotRequired[PushCounts]
    """Only in a replayed answer to a push whose lists were longer than 100 ids: their full lengths."""


class PushAnswer(SuccessBody):
    data: PushData


class AnonymousClient(TypedDict):
    authenticated: Literal[False]
    clientId: str


class ClientUser(TypedDict):
    avatar: str
    name: str
    nickname: str
    oId: str


class SignedInClient(TypedDict):
    authenticated: Literal[True]
    clientId: str
    user: ClientUser


class AnonymousClientAnswer(SuccessBody):
    data: AnonymousClient


class SignedInClientAnswer(SuccessBody):
    data: SignedInClient


UserGetAnswer = Union[AnonymousClientAnswer, SignedInClientAnswer]


class ResolveData(TypedDict):
    operationId: str
    status: Literal["applied", "failed"]
    """What the operation now counts as."""


class ResolveAnswer(SuccessBody):
    data: ResolveData


class OperationEntry(TypedDict):
    """A platform operation whose outcome is not known, as ``operations.list`` answers it."""

    operationId: str
    kind: Literal["PointsEditRequested", "MedalGiveRequested", "MedalRemoveRequested", "ItemsEditRequested"]
    status: Literal["unknown", "pending"]
    """unknown: sent, then no trustworthy answer (resolve it); pending: its request may still be running."""
    oId: str
    userName: str
    request: dict[str, Any]
    """What was asked of the platform (the request body, less the user)."""
    appId: str
    keyId: str
    requestedAt: str
    node: NotRequired[str]
    idempotencyKey: NotRequired[str]
    """The Idempotency-Key the caller sent."""
    requestId: NotRequired[str]
    """The X-Request-Id of the request that sent it."""
    reason: NotRequired[str]
    """Why its outcome is unknown."""


class OperationListData(TypedDict):
    operations: list[OperationEntry]
    """Oldest first, at most ``limit``."""
    more: bool
    """More operations matched than ``limit``."""


class OperationListAnswer(SuccessBody):
    data: OperationListData


class OperatorResolver(TypedDict):
    kind: Literal["operator"]
    name: str


class AppResolver(TypedDict):
    kind: Literal["app"]
    appId: str
    keyId: str
    allApps: NotRequired[Literal[True]]


class Resolution(TypedDict):
    applied: bool
    note: str
    by: Union[OperatorResolver, AppResolver]
    at: str


class LateAnswer(TypedDict):
    answer: Literal["applied", "rejected", "failed", "unknown"]
    detail: str
    at: str


class Outcome(TypedDict):
    status: OutcomeStatus
    message: NotRequired[str]
    reason: NotRequired[str]
    at: NotRequired[str]
    resolution: NotRequired[Resolution]
    answeredAfterResolution: NotRequired[LateAnswer]


class AuditEntry(TypedDict):
    position: int
    """Global log position: the cursor for ``after`` / ``before``."""
    time: str
    appId: str
    """The application that asked."""
    keyId: str
    """The API key it used."""
    requestId: NotRequired[str]


class OperationAuditEntry(AuditEntry):
    operationId: str
    outcome: Outcome


class PointsRequest(TypedDict):
    point: int
    memo: str


class PointsAuditEntry(OperationAuditEntry):
    request: PointsRequest


class MedalRequest(TypedDict):
    name: str
    description: NotRequired[str]
    attr: NotRequired[str]
    data: NotRequired[str]


class MedalAuditEntry(OperationAuditEntry):
    action: Literal["give", "remove"]
    request: MedalRequest


class ItemsRequest(TypedDict):
    item: str
    sum: int


class ItemsAuditEntry(OperationAuditEntry):
    request: ItemsRequest


class VipAuditEntry(AuditEntry):
    action: Literal["granted", "renewed"]
    recordId: str
    quality: VipQuality
    expired: str
    previousExpired: NotRequired[str]


class AuditCursors(TypedDict):
    next: NotRequired[int]
    """Later entries exist: ask again with ``after=next``."""
    prev: NotRequired[int]
    """Earlier entries exist: ask again with ``before=prev``."""


class PointsAuditData(AuditCursors):
    items: list[PointsAuditEntry]


class MedalAuditData(AuditCursors):
    items: list[MedalAuditEntry]


class ItemsAuditData(AuditCursors):
    items: list[ItemsAuditEntry]


class VipAuditData(AuditCursors):
    items: list[VipAuditEntry]


class PointsAuditPage(SuccessBody):
    data: PointsAuditData


class MedalAuditPage(SuccessBody):
    data: MedalAuditData


class ItemsAuditPage(SuccessBody):
    data: ItemsAuditData


class VipAuditPage(SuccessBody):
    data: VipAuditData


class PresenceEntry(TypedDict):
    """A user online now: signed-in realtime clients held by live nodes."""

    position: int
    """Log position of the earliest sign-in among those clients: the order, and the cursor for ``after`` / ``before``."""
    userId: str
    oId: str
    name: str
    nickname: str
    avatar: str
    clients: int
    since: str
    """The earliest of those clients' sign-ins, as the service's log recorded it."""


class PresencePageData(AuditCursors):
    items: list[PresenceEntry]
    """The user online longest first."""


class PresencePage(SuccessBody):
    data: PresencePageData


class PresenceData(TypedDict):
    oId: str
    online: bool
    clients: int
    """0 when offline."""
    since: NotRequired[str]
    """When online: the earliest of the live clients' sign-ins, as the log recorded it."""
    userId: NotRequired[str]
    """When the service knows the user."""


class PresenceAnswer(SuccessBody):
    data: PresenceData


WebhookEventType = Literal[
    "client.signed_in", "client.disconnected", "message.delivered", "operation.outcome_known", "operation.outcome_unknown", "operation.resolved"
]


class WebhookDisabled(TypedDict):
    reason: Literal["requested", "failing"]
    """``failing``: every delivery failed for the whole retry period; enable it once it answers again."""
    detail: str
    at: str


class WebhookFailure(TypedDict):
    at: str
    why: str


class WebhookEndpoint(TypedDict):
    """An app's webhook endpoint, never with its secret."""

    id: str
    appId: str
    url: str
    events: list[WebhookEventType]
    description: str
    status: Literal["enabled", "disabled"]
    disabled: NotRequired[WebhookDisabled]
    created: str
    previousSecretValidUntil: NotRequired[str]
    """After a rotation: the previous secret also signs until then."""
    lastDelivered: NotRequired[str]
    lastFailed: NotRequired[WebhookFailure]
    pending: int
    """Deliveries not yet made nor given up."""


class WebhookCreatedData(TypedDict):
    endpoint: WebhookEndpoint
    secret: NotRequired[str]
    """The signing secret, in this answer only (absent when an Idempotency-Key replays it)."""


class WebhookCreated(SuccessBody):
    data: WebhookCreatedData


class WebhookAnswer(SuccessBody):
    data: WebhookEndpoint


class WebhookListData(TypedDict):
    items: list[WebhookEndpoint]


class WebhookList(SuccessBody):
    data: WebhookListData


class WebhookRotatedData(TypedDict):
    endpoint: WebhookEndpoint
    secret: NotRequired[str]
    previousValidUntil: str


class WebhookRotated(SuccessBody):
    data: WebhookRotatedData


class WebhookDeletedData(TypedDict):
    id: str
    deleted: Literal[True]


class WebhookDeletedAnswer(SuccessBody):
    data: WebhookDeletedData


class WebhookAttempt(TypedDict):
    eventId: str
    type: WebhookEventType
    deliveryId: str
    attempt: int
    node: str
    started: str
    result: Literal["delivered", "failed", "sending", "interrupted"]
    status: NotRequired[int]
    error: NotRequired[str]
    response: NotRequired[str]
    """The first 1 KiB of the receiver's answer."""
    durationMs: NotRequired[int]
    retryAt: NotRequired[str]
    """After a failure: when the next attempt may start (absent: given up)."""
    ended: NotRequired[str]


class WebhookAttemptsData(TypedDict):
    items: list[WebhookAttempt]
    """Newest first."""


class WebhookAttempts(SuccessBody):
    data: WebhookAttemptsData


class WebhookResentData(TypedDict):
    eventId: str
    deliveryId: str


class WebhookResent(SuccessBody):
    data: WebhookResentData
