import Foundation

/// The language of the texts the server writes for a device (the account_conflict notice, push previews).
public enum SessionLanguage: String, Sendable, Hashable, CaseIterable {
    case en
    case zh

    /// The supported language a device prefers most (RFC 9110 §12.5.4: the highest `q`, the earlier one on a tie;
    /// `zh`, `zh-CN`, `zh-Hant`... are Chinese, `en-*` English), or English when it names none of them or the
    /// header is absent or malformed.
    public init(acceptLanguage header: String?) {
        self = .en
        guard let header, header.utf8.count <= 1024 else { return }
        var best: (language: SessionLanguage, quality: Double)?
        for item in header.split(separator: ",").prefix(32) {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let range = parts.first, let language = Self(languageRange: range) else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "q" else { continue }
                quality = Double(pair[1]).flatMap { (0...1).contains($0) ? $0 : nil } ?? 0
            }
            if quality > 0, quality > (best?.quality ?? 0) { best = (language, quality) }
        }
        if let best { self = best.language }
    }

    /// `zh`, `zh-...`, `en`, `en-...` (case-insensitive); nil for any other range, `*` included.
    public init?(languageRange range: String) {
        let primary = range.split(separator: "-", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        guard let language = Self(rawValue: primary) else { return nil }
        self = language
    }
}
