extension MultipartPartHead {
    /// The file name of a raw upload's `Content-Disposition: attachment; filename*=UTF-8''...` (preferred, RFC 6266
    /// §4.3) or `filename="..."`; the same grammar as a multipart part's header.
    static func filename(fromDisposition value: String) -> String? {
        guard let parsed = HeaderParameters(parsing: value) else { return nil }
        return parsed.parameter("filename*").flatMap(ExtendedParameterValue.decode) ?? parsed.parameter("filename")
    }
}
