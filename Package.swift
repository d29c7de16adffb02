// swift-tools-version:6.0
import PackageDescription

// Parley depends only on the toolchain and on C libraries from Debian (libpq, OpenSSL).
// Dependencies point one way: C shims <- core layers (Net, HTTP, Postgres, Crypto) <- features <- ParleyApp <- parley.
// Release builds drop dynamic exclusivity checks: every stored-property access of a class paid a
// thread-local lookup (callgrind: ~8% of a request). Connection state is loop-confined, and debug
// and test builds keep the checks, so a violation still fails the tests.
let swiftSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "parley", targets: ["parley"]),
    ],
    targets: [
        // C shims: Glibc's Swift module hides epoll, eventfd, timerfd and accept4.
        .systemLibrary(name: "CParleyLinux", path: "Sources/CParleyLinux"),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),

        // Core layers.
        .target(name: "ParleyBytes", swiftSettings: swiftSettings),
        .target(name: "ParleyJSON", dependencies: ["ParleyBytes"], swiftSettings: swiftSettings),
        // The event loops come before observability: log buffers and metric caches are kept per loop (`LoopLocal`).
        .target(name: "ParleyNet", dependencies: ["CParleyLinux"], swiftSettings: swiftSettings),
        .target(name: "ParleyObservability", dependencies: ["ParleyBytes", "ParleyJSON", "ParleyNet"], swiftSettings: swiftSettings),
        // Background work's one lifecycle: services started in order, stopped in reverse.
        .target(name: "ParleyLifecycle", dependencies: ["ParleyObservability"], swiftSettings: swiftSettings),
        .target(name: "ParleyCrypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .target(name: "ParleyHTTP", dependencies: ["CParleyLinux", "ParleyBytes", "ParleyNet", "ParleyObservability", "ParleyJSON"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyPostgres", dependencies: ["CLibPQ", "ParleyNet", "ParleyCrypto", "ParleyObservability", "ParleyBytes"],
                swiftSettings: swiftSettings),
        // Outgoing HTTP (S3, APNs over HTTP/2) through libcurl, off the event loops.
        .target(name: "ParleyHTTPClient", dependencies: ["CCurl", "ParleyObservability"], swiftSettings: swiftSettings),
        .target(name: "ParleyWebSocket", dependencies: ["ParleyHTTP", "ParleyNet", "ParleyCrypto", "ParleyObservability"],
                swiftSettings: swiftSettings),
        // A NATS client (the relay between instances): pure parser, encoder and connection state machine + driver.
        .target(name: "ParleyNATS", dependencies: ["ParleyNet", "ParleyObservability"], swiftSettings: swiftSettings),

        // Message kinds and their one-line previews: shared by messaging and push (which must not depend on it).
        .target(name: "ParleyMessageModel", dependencies: ["ParleyJSON"], swiftSettings: swiftSettings),

        // Features.
        .target(name: "ParleyAuth", dependencies: ["ParleyLifecycle", "ParleyHTTP", "ParleyPostgres", "ParleyCrypto", "ParleyObservability",
                                                   "ParleyNet", "ParleyJSON", "ParleyBytes"], swiftSettings: swiftSettings),
        .target(name: "ParleyMessaging", dependencies: ["ParleyMessageModel", "ParleyLifecycle", "ParleyAuth", "ParleyHTTP", "ParleyPostgres", "ParleyJSON",
                                                        "ParleyCrypto", "ParleyNet", "ParleyObservability"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyRealtime", dependencies: ["ParleyLifecycle", "ParleyMessaging", "ParleyAuth", "ParleyWebSocket", "ParleyHTTP", "ParleyNATS",
                                                       "ParleyPostgres", "ParleyJSON", "ParleyNet", "ParleyCrypto",
                                                       "ParleyObservability", "ParleyBytes"],
                swiftSettings: swiftSettings),

        .target(name: "ParleyFiles", dependencies: ["ParleyLifecycle", "ParleyAuth", "ParleyHTTP",
                                                    "ParleyHTTPClient", "ParleyPostgres", "ParleyJSON",
                                                    "ParleyCrypto", "ParleyNet", "ParleyBytes",
                                                    "ParleyObservability"],
                swiftSettings: swiftSettings),
        .target(name: "ParleyUpdates", dependencies: ["ParleyLifecycle", "ParleyAuth", "ParleyHTTP",
                                                      "ParleyPostgres", "ParleyCrypto", "ParleyNet",
                                                      "ParleyObservability"],
                swiftSettings: swiftSettings),

        // Offline push: device tokens, the outbox worker, APNs over HTTP/2 (it and messaging do not depend on each other).
        .target(name: "ParleyPush", dependencies: ["ParleyLifecycle", "ParleyMessageModel", "ParleyAuth", "ParleyHTTP", "ParleyHTTPClient",
                                                   "ParleyPostgres", "ParleyJSON", "ParleyCrypto", "ParleyNet",
                                                   "ParleyObservability"],
                swiftSettings: swiftSettings),

        // Webhooks: calls to an app's own backend (before_send in the send path; after-events through an outbox that
        // triggers fill, so no feature depends on it).
        .target(name: "ParleyWebhooks", dependencies: ["ParleyLifecycle", "ParleyMessageModel", "ParleyAuth", "ParleyHTTP", "ParleyHTTPClient",
                                                       "ParleyPostgres", "ParleyJSON", "ParleyCrypto", "ParleyNet",
                                                       "ParleyObservability"],
                swiftSettings: swiftSettings),

        // Call signalling: calls and their participants in PostgreSQL, REST routes, the `call_*` frames (handed to the
        // gateway by ParleyApp: realtime does not depend on it), events through messaging's user events, the records.
        .target(name: "ParleyCalls", dependencies: ["ParleyLifecycle", "ParleyMessageModel", "ParleyMessaging", "ParleyAuth",
                                                    "ParleyHTTP", "ParleyPostgres", "ParleyJSON", "ParleyCrypto",
                                                    "ParleyObservability"],
                swiftSettings: swiftSettings),

        // `parley chat`: a terminal IM client on the public REST API and WebSocket protocol, also the example code
        // for SDK authors. A client of the server, so it depends on core layers only, never on a feature.
        .target(name: "ParleyChatClient", dependencies: ["ParleyWebSocket", "ParleyHTTPClient", "ParleyJSON", "ParleyNet",
                                                         "ParleyCrypto"],
                swiftSettings: swiftSettings),

        // Composition root and executable.
        .target(name: "ParleyApp", dependencies: ["ParleyLifecycle", "ParleyHTTP", "ParleyPostgres", "ParleyNet",
                                                  "ParleyCrypto", "ParleyObservability", "ParleyAuth",
                                                  "ParleyWebSocket", "ParleyMessaging", "ParleyRealtime", "ParleyNATS",
                                                  "ParleyFiles", "ParleyUpdates", "ParleyPush", "ParleyHTTPClient",
                                                  "ParleyJSON", "ParleyWebhooks", "ParleyCalls"],
                swiftSettings: swiftSettings),
        .executableTarget(name: "parley", dependencies: ["ParleyApp", "ParleyChatClient", "ParleyNet",
                                                         "ParleyObservability", "ParleyPostgres"],
                          swiftSettings: swiftSettings),
        // Profiling harness for the HTTP request path (scripts/profile-http).
        .executableTarget(name: "parley-http-profile", dependencies: ["ParleyHTTP", "ParleyNet", "ParleyObservability"],
                          swiftSettings: swiftSettings),
        // Realtime benchmark: WebSocket client load on the epoll loops (scripts/bench-realtime).
        .executableTarget(name: "parley-bench", dependencies: ["ParleyWebSocket", "ParleyNet", "ParleyJSON", "ParleyCrypto",
                                                               "CParleyLinux"],
                          swiftSettings: swiftSettings),

        // Test support: shared by the test targets only.
        .target(name: "ParleyTestSupport", dependencies: ["ParleyPostgres", "ParleyNet", "ParleyObservability"],
                path: "Tests/ParleyTestSupport"),
        // A whole Parley server on a fresh database, and an HTTP client for it (feature tests).
        .target(name: "ParleyLiveSupport", dependencies: ["ParleyApp", "ParleyAuth", "ParleyFiles", "ParleyCrypto", "ParleyObservability",
                                                          "ParleyPostgres", "ParleyTestSupport", "ParleyWebSocket"],
                path: "Tests/ParleyLiveSupport"),

        // Tests.
        .testTarget(name: "ParleyHTTPTests", dependencies: ["ParleyHTTP", "ParleyNet", "ParleyTestSupport",
                                                            "ParleyJSON", "ParleyObservability"]),
        .testTarget(name: "ParleyBytesTests", dependencies: ["ParleyBytes"]),
        .testTarget(name: "ParleyObservabilityTests", dependencies: ["ParleyObservability"]),
        .testTarget(name: "ParleyNetTests", dependencies: ["ParleyNet"]),
        .testTarget(name: "ParleyLifecycleTests", dependencies: ["ParleyLifecycle", "ParleyObservability", "ParleyTestSupport"]),
        .testTarget(name: "ParleyCryptoTests", dependencies: ["ParleyCrypto"]),
        .testTarget(name: "ParleyJSONTests", dependencies: ["ParleyJSON", "ParleyTestSupport"]),
        .testTarget(name: "ParleyPostgresTests", dependencies: ["ParleyPostgres", "ParleyNet", "ParleyTestSupport",
                                                                "ParleyObservability"]),
        .testTarget(name: "ParleyWebSocketTests", dependencies: ["ParleyWebSocket", "ParleyHTTP", "ParleyNet",
                                                                 "ParleyObservability", "ParleyTestSupport"]),
        .testTarget(name: "ParleyAuthTests", dependencies: ["ParleyAuth", "ParleyApp", "ParleyHTTP", "ParleyPostgres",
                                                           "ParleyCrypto", "ParleyNet", "ParleyObservability",
                                                           "ParleyTestSupport", "ParleyLiveSupport"]),
        .testTarget(name: "ParleyMessagingTests", dependencies: ["ParleyMessageModel", "ParleyMessaging", "ParleyApp", "ParleyAuth",
                                                                 "ParleyHTTP", "ParleyJSON", "ParleyPostgres",
                                                                 "ParleyTestSupport", "ParleyLiveSupport",
                                                                 "ParleyCrypto", "ParleyObservability"]),
        .testTarget(name: "ParleyRealtimeTests", dependencies: ["ParleyRealtime", "ParleyMessaging", "ParleyAuth",
                                                                "ParleyWebSocket", "ParleyTestSupport",
                                                                "ParleyLiveSupport", "ParleyJSON", "ParleyPostgres",
                                                                "ParleyHTTP", "ParleyNet", "ParleyObservability",
                                                                "ParleyNATS"]),
        .testTarget(name: "ParleyHTTPClientTests", dependencies: ["ParleyHTTPClient", "ParleyTestSupport"]),
        .testTarget(name: "ParleyFilesTests", dependencies: ["ParleyFiles", "ParleyHTTP", "ParleyHTTPClient",
                                                             "ParleyCrypto", "ParleyPostgres", "ParleyTestSupport",
                                                             "ParleyLiveSupport"]),
        .testTarget(name: "ParleyUpdatesTests", dependencies: ["ParleyUpdates", "ParleyApp", "ParleyAuth",
                                                               "ParleyHTTP", "ParleyPostgres", "ParleyTestSupport",
                                                               "ParleyLiveSupport", "ParleyCrypto",
                                                               "ParleyObservability"]),
        .testTarget(name: "ParleyPushTests", dependencies: ["ParleyPush", "ParleyApp", "ParleyAuth", "ParleyHTTP", "ParleyHTTPClient",
                                                            "ParleyJSON", "ParleyMessageModel", "ParleyCrypto", "ParleyPostgres",
                                                            "ParleyWebSocket", "ParleyTestSupport",
                                                            "ParleyLiveSupport", "ParleyObservability"]),
        .testTarget(name: "ParleyWebhooksTests", dependencies: ["ParleyWebhooks", "ParleyApp", "ParleyAuth", "ParleyHTTP",
                                                                "ParleyHTTPClient", "ParleyJSON", "ParleyCrypto",
                                                                "ParleyNet", "ParleyObservability", "ParleyTestSupport",
                                                                "ParleyLiveSupport"]),
        .testTarget(name: "ParleyCallsTests", dependencies: ["ParleyCalls", "ParleyAuth", "ParleyMessaging", "ParleyJSON", "ParleyHTTP",
                                                             "ParleyCrypto", "ParleyPostgres", "ParleyTestSupport",
                                                             "ParleyLiveSupport"]),
        .testTarget(name: "ParleyNATSTests", dependencies: ["ParleyNATS", "ParleyNet", "ParleyObservability",
                                                            "ParleyTestSupport"]),
        .testTarget(name: "ParleyChatClientTests", dependencies: ["ParleyChatClient", "ParleyJSON"]),
        .testTarget(name: "ParleyAppTests", dependencies: ["ParleyApp", "ParleyHTTP", "ParleyNet",
                                                           "ParleyObservability", "ParleyLiveSupport", "ParleyPostgres",
                                                           "ParleyTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
