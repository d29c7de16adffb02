extension MIMESniffer {
    /// Normalised extension -> media type: what a file name claims. A claim never decides a type by itself: it may
    /// refine what the bytes show (`refines`) or mark text as active content (`isActiveContent`).
    static let typesByExtension: [String: String] = [
        "jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp", "heic": "image/heic",
        "heif": "image/heif", "avif": "image/avif", "bmp": "image/bmp", "tiff": "image/tiff",
        "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "mp4": "video/mp4", "m4v": "video/x-m4v", "mov": "video/quicktime", "webm": "video/webm",
        "mkv": "video/x-matroska", "3gp": "video/3gpp", "avi": "video/x-msvideo", "ogv": "video/ogg",
        "m4a": "audio/mp4", "aac": "audio/aac", "mp3": "audio/mpeg", "ogg": "audio/ogg", "oga": "audio/ogg",
        "opus": "audio/ogg", "amr": "audio/amr", "awb": "audio/amr-wb", "wav": "audio/wav", "flac": "audio/flac",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "7z": "application/x-7z-compressed", "rar": "application/vnd.rar", "rtf": "application/rtf",
        "doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation", "epub": "application/epub+zip",
        "apk": "application/vnd.android.package-archive", "jar": "application/java-archive",
        "txt": "text/plain", "csv": "text/csv", "md": "text/markdown", "html": "text/html", "css": "text/css",
        "json": "application/json", "xml": "application/xml", "ics": "text/calendar", "vcf": "text/vcard",
        "xhtml": "application/xhtml+xml", "js": "text/javascript", "mjs": "text/javascript",
        "xsl": "application/xslt+xml", "xslt": "application/xslt+xml",
    ]

    /// Media type -> the extension files of that type are stored under. Where several extensions share a
    /// type, `preferredExtensions` picks (`audio/ogg` -> `ogg`, not `opus`), so the answer never depends on
    /// dictionary order.
    static let extensionsByType: [String: String] = {
        var result: [String: String] = [:]
        for (ext, type) in typesByExtension where result[type] == nil || preferredExtensions.contains(ext) {
            result[type] = ext
        }
        return result
    }()

    /// Where several extensions share a type, the one to store under.
    private static let preferredExtensions: Set = ["ogg"]

    /// Spellings of the same extension.
    static let extensionAliases: [String: String] = [
        "jpeg": "jpg", "jpe": "jpg", "jfif": "jpg", "tif": "tiff", "htm": "html", "qt": "mov", "3gpp": "3gp",
        "markdown": "md", "text": "txt", "heics": "heic", "heifs": "heif", "xht": "xhtml", "svgz": "svg",
    ]

    /// Non-standard media types clients send, mapped to the registered name.
    static let mediaTypeAliases: [String: String] = [
        "image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png",
        "image/x-ms-bmp": "image/bmp", "image/x-icon": "image/vnd.microsoft.icon",
        "audio/mp3": "audio/mpeg", "audio/x-mp3": "audio/mpeg", "audio/x-mpeg": "audio/mpeg",
        "audio/mpeg3": "audio/mpeg", "audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4",
        "audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav",
        "audio/x-aac": "audio/aac", "audio/x-flac": "audio/flac", "audio/opus": "audio/ogg",
        "application/x-pdf": "application/pdf", "application/x-zip-compressed": "application/zip",
        "application/x-zip": "application/zip", "text/xml": "application/xml",
    ]

    /// Containers that are zip archives inside: a claim to be one of these refines a sniffed `application/zip`.
    static let zipBasedTypes: Set = [
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet",
        "application/vnd.oasis.opendocument.presentation", "application/epub+zip",
        "application/vnd.android.package-archive", "application/java-archive",
    ]

    /// A Compound File Binary (MS-CFB), the container of Office 97-2003 documents, when nothing refines it.
    static let compoundFileType = "application/x-ole-storage"

    /// Documents inside a compound file: a claim to be one of these refines a sniffed compound file.
    static let compoundFileBasedTypes: Set = [
        "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    ]

    /// Active types that neither end in `+xml` nor name JavaScript (`isActiveContent`).
    static let activeTypes: Set = [
        "text/html", "text/xml", "application/xml", "text/xsl", "text/css", "text/jscript", "text/livescript",
        "text/x-component", "application/x-shockwave-flash", "application/vnd.adobe.flash-movie",
    ]

    /// Every type `detect` can answer: what `magicType` proves, the refinements of it, text and octets. A download
    /// serves a stored type only when it is one of these, so rows typed by an older, more trusting sniffer cannot
    /// come back as HTML or SVG.
    public static let storableTypes: Set<String> = Set([
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/heif", "image/avif",
        "image/tiff", "image/bmp", "audio/wav", "audio/mp4", "audio/aac", "audio/mpeg", "audio/ogg", "audio/amr",
        "audio/amr-wb", "audio/flac", "video/mp4", "video/x-m4v", "video/quicktime", "video/3gpp",
        "video/x-msvideo", "video/webm", "video/x-matroska", "video/ogg", "application/pdf", "application/zip",
        "application/gzip", "application/x-7z-compressed", "application/vnd.rar", "application/x-tar",
        compoundFileType, DetectedType.plainText.mimeType, DetectedType.octetStream.mimeType,
    ]).union(zipBasedTypes).union(compoundFileBasedTypes)
}
