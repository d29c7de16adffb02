import ParleyFiles
import Testing

/// Download URLs sign the disposition they grant: a link signed for an attachment cannot be turned inline, and
/// links signed before the disposition was still open, as attachments only.
@Suite struct FileURLSignerTests {
    let signer = FileURLSigner(secret: Array("a test secret".utf8))
    let key = "7/2026/12/Zq3c0Fh2kWb9uLxNpR7sTw"
    let exp: Int64 = 2_000_000_000
    let now: Int64 = 1_900_000_000

    func verify(_ query: String) -> FileURLSigner.Verdict {
        var values: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return signer.verify(
            objectKey: key, expiresAt: values["exp"], disposition: values["d"], signature: values["sig"], now: now)
    }

    @Test func aURLGrantsTheDispositionItWasSignedFor() {
        let inline = signer.query(objectKey: key, expiresAt: exp, appId: 7, disposition: .inline)
        let attachment = signer.query(objectKey: key, expiresAt: exp, appId: 7, disposition: .attachment)
        #expect(inline.contains("&d=i&"))
        #expect(attachment.contains("&d=a&"))
        #expect(verify(inline) == .valid(.inline))
        #expect(verify(attachment) == .valid(.attachment))
        // Twice: the second check is answered from the per-loop memo, which must tell dispositions apart too.
        #expect(verify(inline) == .valid(.inline))
        #expect(verify(attachment) == .valid(.attachment))
    }

    @Test func changingTheDispositionBreaksTheSignature() {
        let attachment = signer.query(objectKey: key, expiresAt: exp, appId: 7, disposition: .attachment)
        let inline = signer.query(objectKey: key, expiresAt: exp, appId: 7, disposition: .inline)
        #expect(verify(attachment) == .valid(.attachment))
        #expect(verify(attachment.replacingOccurrences(of: "d=a", with: "d=i")) == .invalid)
        #expect(verify(inline.replacingOccurrences(of: "d=i", with: "d=a")) == .invalid)
        // Dropping `d` makes it the older form, whose MAC does not cover a disposition.
        #expect(verify(inline.replacingOccurrences(of: "&d=i", with: "")) == .invalid)
        for bad in ["d=", "d=I", "d=ii", "d=x", "d=inline"] {
            #expect(verify(inline.replacingOccurrences(of: "d=i", with: bad)) == .invalid, "\(bad)")
        }
    }

    @Test func urlsSignedWithoutADispositionOpenAsAttachments() {
        let legacy = signer.signature(objectKey: key, expiresAt: exp, appId: 7, disposition: nil)
        #expect(verify("exp=\(exp)&sig=\(legacy)") == .valid(.attachment))
        // Granting themselves a disposition breaks them.
        #expect(verify("exp=\(exp)&d=i&sig=\(legacy)") == .invalid)
        #expect(verify("exp=\(exp)&d=a&sig=\(legacy)") == .invalid)
        #expect(verify("exp=\(now)&sig=\(legacy)") == .invalid)
    }

    @Test func expiryIsCheckedAfterTheSignature() {
        let past = signer.query(objectKey: key, expiresAt: now - 1, appId: 7, disposition: .inline)
        #expect(verify(past) == .expired)
        #expect(verify(past.replacingOccurrences(of: "d=i", with: "d=a")) == .invalid)
    }
}
