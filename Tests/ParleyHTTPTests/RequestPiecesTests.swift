import Foundation
import ParleyObservability
import Synchronization
import Testing

@testable import ParleyHTTP

/// The small per-request structures: path parameters, header name spelling.
struct RequestPiecesTests {
    @Test func pathParametersBehaveLikeADictionary() {
        var parameters = PathParameters()
        #expect(parameters.isEmpty && parameters["id"] == nil)
        parameters["id"] = "7"
        parameters["name"] = "x"
        parameters["id"] = "8"
        #expect(parameters.count == 2 && parameters["id"] == "8" && parameters["name"] == "x")
        parameters["id"] = nil
        #expect(parameters.count == 1 && parameters["id"] == nil)
        let literal: PathParameters = ["a": "1", "b": "2"]
        let reordered: PathParameters = ["b": "2", "a": "1"]
        #expect(literal == reordered)
        #expect(literal != ["a": "1"])
        #expect(literal != ["a": "1", "b": "3"])
    }

    @Test func routerCapturesDecodedParametersAndRefusesNUL() {
        var router = Router()
        router.get("/users/{id}/files/{key...}") { _, _ in .json(status: 200, body: []) }
        guard case .found(_, let parameters) = router.match(method: .GET, path: "/users/a%20b/files/x/y%2Fz") else {
            Issue.record("no match")
            return
        }
        #expect(parameters["id"] == "a b")
        #expect(parameters["key"] == "x/y/z")
        guard case .notFound = router.match(method: .GET, path: "/users/a%00b/files/x") else {
            Issue.record("a NUL in a parameter matched")
            return
        }
    }

    @Test func headerNamesGoOutInTheirUsualSpelling() {
        var headers = HTTPHeaders()
        for name in [
            "etag", "www-authenticate", "sec-websocket-accept", "x-request-id", "content-type", "x-foo-bar-1",
            "sec-websocket-", "e",
        ] {
            headers.add(name: name, value: "v")
        }
        let bytes = ResponseSerializer().serialize(
            HTTPResponse(status: 200, headers: headers), requestMethod: .GET,
            requestVersion: .http1_1, keepAlive: true, date: Array("D".utf8))
        let text = String(decoding: bytes, as: UTF8.self)
        for line in [
            "ETag: v", "WWW-Authenticate: v", "Sec-WebSocket-Accept: v", "X-Request-Id: v", "Content-Type: v",
            "X-Foo-Bar-1: v", "Sec-Websocket-: v", "E: v",
        ] {
            #expect(text.contains("\r\n\(line)\r\n"), "\(line)")
        }
    }

    @Test func framingHeadersFromHandlersNeverReachTheWire() {
        var headers = HTTPHeaders()
        for (name, value) in [
            ("content-length", "999"), ("connection", "close"), ("transfer-encoding", "chunked"),
            ("date", "yesterday"), ("dates", "kept"), ("content-lengths", "kept"),
        ] {
            headers.add(name: name, value: value)
        }
        let bytes = ResponseSerializer().serialize(
            HTTPResponse(status: 200, headers: headers, body: Array("hi".utf8)),
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: true,
            date: Array("D".utf8))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "HTTP/1.1 200 OK\r\nDates: kept\r\nContent-Lengths: kept\r\nContent-Length: 2\r\nDate: D\r\n\r\nhi")
    }

    @Test func valuesLoseCRAndLF() {
        var headers = HTTPHeaders()
        headers.add(name: "x-a", value: "one\r\nInjected: yes")
        let bytes = ResponseSerializer().serialize(
            HTTPResponse(status: 204, headers: headers), requestMethod: .GET,
            requestVersion: .http1_0, keepAlive: true, date: Array("D".utf8))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "HTTP/1.1 204 No Content\r\nX-A: oneInjected: yes\r\nDate: D\r\nConnection: keep-alive\r\n\r\n")
    }
}
