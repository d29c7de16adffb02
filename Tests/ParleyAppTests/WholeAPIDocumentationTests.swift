import Foundation
import ParleyLiveSupport
import Testing

/// The production router (every feature wired, development routes off) and openapi.yaml's paths are the same set
/// of operations: nothing served undocumented, nothing documented that is not served.
@Suite struct WholeAPIDocumentationTests {
    @Test func routerAndSpecDescribeTheSameOperations() async throws {
        try await withLiveApp(environment: ["PARLEY_DEV_ROUTES": "0"]) { live in
            var served: Set<String> = []
            for route in live.app.server.responder.bareRouter.routes {
                served.insert(
                    "\(route.method.rawValue.lowercased()) \(route.pattern.replacingOccurrences(of: "...}", with: "}"))"
                )
            }
            var documented: Set<String> = []
            for (path, methods) in RepositoryDocuments.documentedOperations(
                try RepositoryDocuments.text("openapi.yaml"))
            {
                for method in methods
                where ["get", "post", "put", "patch", "delete", "head", "options"].contains(method) {
                    documented.insert("\(method) \(path)")
                }
            }
            #expect(served.subtracting(documented).sorted() == [], "served but not in openapi.yaml")
            #expect(documented.subtracting(served).sorted() == [], "in openapi.yaml but not served")
            #expect(served.count > 40, "the production router should hold every feature")
        }
    }
}
