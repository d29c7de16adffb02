import Foundation
import ParleyFiles
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Downloads never run in a browser: what an upload is comes from its bytes, markup goes out as octets and as an
/// attachment, and every `/files/` answer forbids scripts, cross-site reads and sniffing.
@Suite(.serialized) struct DownloadSafetyLiveTests {
    static let html = Array("<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>".utf8)
    static let svg = Array("<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(document.domain)\"/>".utf8)

    /// The headers every answer of the download route carries.
    static func expectLockedDown(_ response: TestResponse, _ what: String) {
        #expect(response.header("content-security-policy") == "default-src 'none'; sandbox", "\(what)")
        #expect(response.header("cross-origin-resource-policy") == "same-site", "\(what)")
        #expect(response.header("x-content-type-options") == "nosniff", "\(what)")
    }

    @Test func anUploadedHTMLFileDownloadsAsAnAttachmentOfOctets() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let data = try await fx.upload(alice, Self.html, name: "page.html", type: "text/html")
            #expect(data["mimeType"] as? String == "application/octet-stream")
            #expect(data["ext"] as? String == "bin")
            let url = try #require(data["url"] as? String)
            // Twice: the first answer loads the metadata (the task path), the second is served from memory.
            for pass in ["loaded", "cached"] {
                let download = try await fx.fetch(url)
                #expect(download.status == 200)
                #expect(download.body == Self.html)
                #expect(download.header("content-type") == "application/octet-stream", "\(pass)")
                #expect(download.header("content-disposition")?.hasPrefix("attachment;") == true, "\(pass)")
                #expect(download.header("content-disposition")?.contains("page.html") == true, "\(pass)")
                Self.expectLockedDown(download, pass)
            }

            // An SVG with a script, as a multipart part that calls itself an image.
            let svg = try await fx.postMultipart(
                alice,
                FilesFixture.multipartBody([
                    (field: "file", filename: "logo.svg", type: "image/svg+xml", bytes: Self.svg)
                ]))
            #expect(svg.status == 201, "\(svg.text)")
            #expect(svg.data["mimeType"] as? String == "application/octet-stream")
            let svgDownload = try await fx.fetch(try #require(svg.data["url"] as? String))
            #expect(svgDownload.header("content-type") == "application/octet-stream")
            #expect(svgDownload.header("content-disposition")?.hasPrefix("attachment;") == true)
            Self.expectLockedDown(svgDownload, "svg")
        }
    }

    @Test func everyAnswerOfTheDownloadRouteCarriesTheHeaders() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let bytes = tinyPNG + patternBytes(5000)
            let data = try await fx.upload(alice, bytes, name: "p.png")
            let key = try #require(data["objectKey"] as? String)
            let url = try #require(data["url"] as? String)
            let whole = try await fx.fetch(url)
            #expect(whole.status == 200)
            Self.expectLockedDown(whole, "200")
            let etag = try #require(whole.header("etag"))
            let notModified = try await fx.fetch(url, headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304)
            Self.expectLockedDown(notModified, "304")
            let partial = try await fx.fetch(url, headers: [("Range", "bytes=0-9")])
            #expect(partial.status == 206)
            Self.expectLockedDown(partial, "206")
            let unsatisfiable = try await fx.fetch(url, headers: [("Range", "bytes=999999-")])
            #expect(unsatisfiable.status == 416)
            Self.expectLockedDown(unsatisfiable, "416")
            let head = try await fx.fetch(url, method: "HEAD")
            #expect(head.status == 200)
            Self.expectLockedDown(head, "HEAD")
            var tampered = url
            tampered.removeLast()
            tampered.append(url.hasSuffix("A") ? "B" : "A")
            let forbidden = try await fx.fetch(tampered)
            #expect(forbidden.code == 1305)
            Self.expectLockedDown(forbidden, "403")
            let now = Int64(Date().timeIntervalSince1970)
            let expired = try await fx.raw(
                "GET",
                "/files/\(key)?"
                    + fx.files.signer.query(
                        objectKey: key, expiresAt: now - 1, appId: fx.messaging.appId, disposition: .inline))
            #expect(expired.code == 1304)
            Self.expectLockedDown(expired, "expired")
            let ghost = ObjectKey.generate(appId: fx.messaging.appId)
            let missing = try await fx.raw(
                "GET",
                "/files/\(ghost)?"
                    + fx.files.signer.query(
                        objectKey: ghost, expiresAt: now + 60, appId: fx.messaging.appId, disposition: .inline))
            #expect(missing.code == 1302)
            Self.expectLockedDown(missing, "404")
            let badKey = try await fx.raw("GET", "/files/\(key)%2Fx?exp=1&sig=x")
            #expect(badKey.code == 1307)
            Self.expectLockedDown(badKey, "400")
        }
    }

    @Test func inlineOnlyForMediaAndOnlyWhenTheSignatureGrantsIt() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let png = try await fx.upload(alice, tinyPNG, name: "p.png")
            let key = try #require(png["objectKey"] as? String)
            let inlineURL = try #require(png["url"] as? String)
            #expect(try await fx.fetch(inlineURL).header("content-disposition")?.hasPrefix("inline;") == true)
            #expect(
                try await fx.fetch(inlineURL + "&download=1").header("content-disposition")?.hasPrefix("attachment;")
                    == true)

            let answer = try await fx.client.post(
                "/api/files/urls", json: ["objectKeys": [key], "disposition": "attachment"], token: alice.accessToken)
            #expect(answer.status == 200, "\(answer.text)")
            let urls = try #require(answer.data["urls"] as? [[String: Any]])
            let attachmentURL = try #require(urls.first?["url"] as? String)
            #expect(attachmentURL.contains("&d=a&"))
            let attachment = try await fx.fetch(attachmentURL)
            #expect(attachment.status == 200)
            #expect(attachment.header("content-disposition")?.hasPrefix("attachment;") == true)
            // A link signed for an attachment cannot be turned inline.
            let turned = try await fx.fetch(attachmentURL.replacingOccurrences(of: "&d=a&", with: "&d=i&"))
            #expect(turned.status == 403)
            #expect(turned.code == 1305)
            let dropped = try await fx.fetch(inlineURL.replacingOccurrences(of: "&d=i&", with: "&"))
            #expect(dropped.code == 1305)

            let refused = try await fx.client.post(
                "/api/files/urls", json: ["objectKeys": [key], "disposition": "render"], token: alice.accessToken)
            #expect(refused.status == 400)
            #expect(refused.code == 1002)

            // A URL signed before the disposition was: still opens, as an attachment.
            let exp = Int64(Date().timeIntervalSince1970) + 600
            let legacy = fx.files.signer.signature(
                objectKey: key, expiresAt: exp, appId: fx.messaging.appId, disposition: nil)
            let old = try await fx.raw("GET", "/files/\(key)?exp=\(exp)&sig=\(legacy)")
            #expect(old.status == 200)
            #expect(old.header("content-type") == "image/png")
            #expect(old.header("content-disposition")?.hasPrefix("attachment;") == true)

            // A PDF granted inline still downloads.
            let pdf = try await fx.upload(alice, Array("%PDF-1.4\n%\u{e2}\n1 0 obj\n".utf8), name: "doc.pdf")
            let pdfDownload = try await fx.fetch(try #require(pdf["url"] as? String))
            #expect(pdfDownload.header("content-type") == "application/pdf")
            #expect(pdfDownload.header("content-disposition")?.hasPrefix("attachment;") == true)
        }
    }

    @Test func filesStoredAsActiveTypesBeforeAreServedAsOctets() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            for stored in ["text/html", "image/svg+xml", "application/xhtml+xml", "text/javascript"] {
                let data = try await fx.upload(alice, Self.html + Array(stored.utf8), name: "old")
                let key = try #require(data["objectKey"] as? String)
                // What a more trusting sniffer stored.
                _ = try await fx.messaging.database.query(
                    .init(unsafeSQL: "UPDATE files SET mime_type = '\(stored)' WHERE object_key = '\(key)'"))
                let download = try await fx.fetch(try #require(data["url"] as? String))
                #expect(download.status == 200)
                #expect(download.header("content-type") == "application/octet-stream", "\(stored)")
                #expect(download.header("content-disposition")?.hasPrefix("attachment;") == true, "\(stored)")
                Self.expectLockedDown(download, stored)
            }
        }
    }

    @Test func imageOnlyAppsRefuseMarkupThatCallsItselfAnImage() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            var update = FileRepository.SettingsUpdate()
            update.allowedTypes = ["image/*"]
            try await fx.files.repository.updateSettings(appId: fx.messaging.appId, update)
            let svg = try await fx.put(alice, Self.svg, name: "avatar.svg", type: "image/svg+xml")
            #expect(svg.status == 415)
            #expect(svg.code == 1301)
            let html = try await fx.put(alice, Self.html, name: "avatar.png", type: "image/png")
            #expect(html.status == 415)
            #expect(html.code == 1301)
            let png = try await fx.put(alice, tinyPNG, name: "avatar.html", type: "text/html")
            #expect(png.status == 201)
            #expect(png.data["mimeType"] as? String == "image/png")
            // A thumbnail must be an image whatever the app allows.
            var everyType = FileRepository.SettingsUpdate()
            everyType.clearTypes = true
            try await fx.files.repository.updateSettings(appId: fx.messaging.appId, everyType)
            let thumbnail = try await fx.postMultipart(
                alice,
                FilesFixture.multipartBody([
                    (field: "file", filename: "a.png", type: "image/png", bytes: tinyPNG),
                    (field: "thumbnail", filename: "t.svg", type: "image/svg+xml", bytes: Self.svg),
                ]))
            #expect(thumbnail.status == 415)
            #expect(thumbnail.code == 1301)
        }
    }
}
