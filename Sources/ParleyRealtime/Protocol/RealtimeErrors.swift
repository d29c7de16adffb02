import ParleyHTTP

/// Realtime errors (1200-1299); 1200 and 1201 are the handshake's (ParleyWebSocket).
extension APIError {
    /// A frame that is not `{"type": "...", "reqId": "...", "data": {...}}`.
    public static let malformedFrame = APIError(
        code: 1202, status: 400, message: "frame is not a JSON object with a string `type`")
    public static let unknownFrameType = APIError(code: 1203, status: 400, message: "unknown frame type")
}
