"""Strict decoders written from the seed clients' own types (scripts/e2e/95-seeds.sh).

A Swift `Decodable` fails on a wrong type; these do too, so that wire drift a schema check would let through
(an `editedAt` date string where the client declares `Int64?`, a `content` object where it declares `String`, a
bool sent as 0/1) fails the seed's flow:
  - String is a JSON string; Int / Int64 a JSON integer (never a bool, never a float, never a string);
    Double any JSON number but a bool; Bool true/false only.
  - A non-optional field must be present and not null; an optional one may be missing or null.
  - A Swift enum with String raw values accepts only its cases.
  - Keys the client does not declare are ignored (what a synthesized Decodable does).
Each decoder returns plain Python values (dicts for structs) or raises DecodeError with the JSON path.
"""
from datetime import datetime


class DecodeError(Exception):
    pass


class Spec:
    def decode(self, value, path):
        raise NotImplementedError


class _String(Spec):
    def decode(self, value, path):
        if not isinstance(value, str):
            raise DecodeError(f"{path}: expected String, got {type(value).__name__} {value!r:.80}")
        return value


class _Int(Spec):
    def decode(self, value, path):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DecodeError(f"{path}: expected Int, got {type(value).__name__} {value!r:.80}")
        if not -2 ** 63 <= value < 2 ** 63:
            raise DecodeError(f"{path}: {value} does not fit Int64")
        return value


class _Double(Spec):
    def decode(self, value, path):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DecodeError(f"{path}: expected Double, got {type(value).__name__} {value!r:.80}")
        return value


class _Bool(Spec):
    def decode(self, value, path):
        if not isinstance(value, bool):
            raise DecodeError(f"{path}: expected Bool, got {type(value).__name__} {value!r:.80}")
        return value


class _Any(Spec):
    """A field the client reads as `[String: Any]` through JSONSerialization, not Decodable."""

    def decode(self, value, path):
        return value


STRING, INT, INT64, DOUBLE, BOOL, ANY = _String(), _Int(), _Int(), _Double(), _Bool(), _Any()


class Optional(Spec):
    def __init__(self, inner):
        self.inner = inner

    def decode(self, value, path):
        return None if value is None else self.inner.decode(value, path)


class Array(Spec):
    def __init__(self, inner):
        self.inner = inner

    def decode(self, value, path):
        if not isinstance(value, list):
            raise DecodeError(f"{path}: expected an array, got {type(value).__name__}")
        return [self.inner.decode(item, f"{path}[{index}]") for index, item in enumerate(value)]


class Enum(Spec):
    """A Swift `enum X: String, Decodable`: any other string fails."""

    def __init__(self, name, cases):
        self.name, self.cases = name, tuple(cases)

    def decode(self, value, path):
        STRING.decode(value, path)
        if value not in self.cases:
            raise DecodeError(f"{path}: {value!r} is not a case of {self.name} {self.cases}")
        return value


class Struct(Spec):
    def __init__(self, name, **fields):
        self.name, self.fields = name, fields

    def decode(self, value, path):
        if not isinstance(value, dict):
            raise DecodeError(f"{path}: expected {self.name} (an object), got {type(value).__name__} {value!r:.80}")
        out = {}
        for key, spec in self.fields.items():
            if key not in value or value[key] is None:
                if not isinstance(spec, Optional):
                    raise DecodeError(f"{path}.{key}: missing non-optional {self.name}.{key}")
                out[key] = None
                continue
            out[key] = spec.decode(value[key], f"{path}.{key}")
        return out


def decode(spec, value, what="$"):
    return spec.decode(value, what)


# --- 001 XuqmGroup SDK --------------------------------------------------------------------------------------

# `ApiResponse<T>`: ApiClient "统一解析 ApiResponse<T>" (Parley's envelope).
def api_response(data_spec):
    return Struct("ApiResponse", code=INT, message=STRING, data=Optional(data_spec))


ChatType = Enum("ChatType", ["single", "group"])
MsgType = Enum("MsgType", ["text", "image", "video", "audio", "file", "custom", "location", "notify", "richText",
                           "callAudio", "callVideo", "forward"])

# public struct ImMessage: Decodable { id, fromId, toId, chatType, msgType, content: String, extra: String?,
#   revoked: Bool, createdAt: String, editedAt: Int64? }
ImMessage = Struct("ImMessage", id=STRING, fromId=STRING, toId=STRING, chatType=ChatType, msgType=MsgType,
                   content=STRING, extra=Optional(STRING), revoked=BOOL, createdAt=STRING, editedAt=Optional(INT64))

# struct LoginResponse: Decodable { let token: String }
LoginResponse = Struct("LoginResponse", token=STRING)

# UpdateSDK.checkAppUpdate: result.needsUpdate, result.info?.versionName, info.appStoreUrl (a non-optional String:
# `URL(string: info.appStoreUrl)`).
UpdateInfo = Struct("UpdateInfo", versionName=STRING, appStoreUrl=STRING)
UpdateResult = Struct("UpdateResult", needsUpdate=BOOL, info=Optional(UpdateInfo))

# FileSDK.upload -> FileUploadResult: .url / .thumbnailUrl / .hash / .size / .mimeType / .ext (thumbnail optional).
FileUploadResult = Struct("FileUploadResult", url=STRING, thumbnailUrl=Optional(STRING), hash=STRING, size=INT64,
                          mimeType=STRING, ext=STRING)

# ImEventDelegate.onRevoke(msgId: String, operatorId: String)
RevokeEvent = Struct("RevokeEvent", msgId=STRING, operatorId=STRING)

# --- Parley's signed login answer (the contract of issue 17, item 1) -----------------------------------------

SignedLogin = Struct("SignedLogin", token=STRING, expiresAt=STRING, user=Struct("User", id=STRING),
                     sessionId=STRING, accessToken=STRING, accessTokenExpiresAt=STRING, refreshToken=STRING,
                     refreshTokenExpiresAt=STRING, imToken=STRING, imTokenExpiresAt=STRING, renewed=BOOL)
PasswordLogin = Struct("PasswordLogin", user=Struct("User", id=STRING, nickname=STRING), sessionId=STRING,
                       accessToken=STRING, refreshToken=STRING, imToken=STRING)
Refreshed = Struct("Refreshed", sessionId=STRING, accessToken=STRING, refreshToken=STRING)

# --- 000 (OpenIM-based app) -----------------------------------------------------------------------------------

# What IMAdapter.mapConversation reads (OIMConversationInfo -> IMConversationSummary), on Parley's names:
# conversationID -> conversationId, userID -> peerUserId, showName, faceURL, isPinned, draftText, unreadCount,
# latestMsg -> latestMessage (an ImMessage), latestMsgSendTime -> lastMessageTime; per-message isRead from the
# 1:1 peer's read point (peerReadSeq). `seq`/`lastSeq` place messages against it.
ConversationSummary = Struct("ConversationSummary", conversationId=STRING, peerUserId=Optional(STRING),
                             showName=Optional(STRING), faceURL=Optional(STRING), isPinned=BOOL,
                             draftText=Optional(STRING), unreadCount=INT, lastMessagePreview=STRING,
                             lastMessageTime=Optional(INT64), latestMessage=Optional(ImMessage),
                             peerReadSeq=Optional(INT64), lastSeq=INT64)
ConversationList = Struct("ConversationList", conversations=Array(ConversationSummary), hasMore=BOOL,
                          totalUnread=INT)
# onConversationChanged: the recipient's devices learn the new unread count and latest message.
ConversationChanged = Struct("ConversationChanged", conversationId=STRING, unreadCount=INT, latestMessage=ImMessage)
# handleAccountConflict(json): json["device_model"] as? String, json["text"] as? String.
AccountConflict = Struct("AccountConflict", device_model=STRING, text=STRING)

# IMMessageMapper: seq places a message against the peer's read point (isRead).
SeqMessage = Struct("SeqMessage", seq=INT64, conversationId=STRING, clientMsgId=Optional(STRING))

MessagePage = Struct("MessagePage", messages=Array(ImMessage), hasMore=BOOL)
FileURLs = Struct("FileURLs", urls=Array(Struct("SignedURL", objectKey=STRING, url=STRING, urlExpireAt=STRING)),
                  denied=Array(STRING))

# --- 002 (RTM-style history paging) ---------------------------------------------------------------------------
# RTMHistoryMessage: fromUid, messageId, modifiedTime (ms), stringMessage; mapped from Parley's ImMessage.

# --- 004 (Bmob) -----------------------------------------------------------------------------------------------
PublicProfile = Struct("PublicProfile", id=STRING, nickname=STRING, avatar=Optional(STRING))
Lookup = Struct("Lookup", users=Array(PublicProfile))


def epoch_ms(iso):
    """An ISO 8601 UTC date (`2026-12-01T05:10:01.123Z`) as epoch milliseconds; raises DecodeError otherwise."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise DecodeError(f"not an ISO 8601 date: {iso!r}")
    if moment.tzinfo is None:
        raise DecodeError(f"no time zone in {iso!r}")
    return int(moment.timestamp() * 1000)
