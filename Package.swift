// swift-tools-version:6.0
import PackageDescription

// Module shape (see docs/ARCHITECTURE.md): dependencies point down only.
//   entitle (CLI) → Server (HTTP adapters, composition: opens the store) → HTTP, Application, Storage
//   Application (use cases) → AppStoreAPI and GooglePlay → HTTPClient, Entitlements (the domain, with its FactStore port)
//   Storage (SQLite, PostgreSQL) → Entitlements → AppStore → Crypto → COpenSSL + CShims
//   JSON at the bottom. Each C module is imported (with `internal import`) by exactly one module.
// Every Swift target is built with the upcoming features that make a module's boundary explicit:
// `any` spelled out, imports internal unless marked, and members visible only from imported modules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Entitle",
    products: [
        .executable(name: "entitle", targets: ["entitle"]),
        .executable(name: "entitle-bench", targets: ["entitle-bench"]),
        .library(name: "EntitleKit", targets: ["EntitleKit"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "CShims",
            dependencies: ["COpenSSL"],
            path: "Sources/CShims",
            cSettings: [
                .define("OPENSSL_API_COMPAT", to: "30000"),
                .define("OPENSSL_NO_DEPRECATED"),
            ],
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CCurlShims", dependencies: ["CCurl"], path: "Sources/CCurlShims", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "HTTPClient", dependencies: ["CCurl", "CCurlShims"], path: "Sources/HTTPClient"),
        .target(name: "AppStoreAPI", dependencies: ["HTTPClient", "AppStore", "Crypto", "JSON"], path: "Sources/AppStoreAPI"),
        .target(name: "GooglePlay", dependencies: ["HTTPClient", "Crypto", "Instants", "JSON"], path: "Sources/GooglePlay"),
        .target(name: "JSON", path: "Sources/JSON"),
        // Epoch milliseconds and ISO 8601 durations: every instant enters and is converted here.
        .target(name: "Instants", dependencies: ["JSON"], path: "Sources/Instants"),
        .target(name: "Crypto", dependencies: ["COpenSSL", "CShims", "JSON"], path: "Sources/Crypto"),
        .target(name: "AppStore", dependencies: ["Crypto", "Instants", "JSON"], path: "Sources/AppStore"),
        .target(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "Entitlements", dependencies: ["AppStore", "Instants", "JSON"], path: "Sources/Entitlements"),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CPostgreSQL",
            path: "Sources/CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(name: "Storage", dependencies: ["CSQLite", "CPostgreSQL", "Entitlements"], path: "Sources/Storage"),
        .target(name: "HTTP", dependencies: ["CLinux"], path: "Sources/HTTP"),
        .target(
            name: "Application",
            dependencies: ["AppStore", "AppStoreAPI", "Crypto", "Entitlements", "GooglePlay", "HTTPClient", "Instants", "JSON"],
            path: "Sources/Application"
        ),
        .target(
            name: "Server",
            dependencies: ["Application", "HTTP", "Storage", "Entitlements", "AppStore", "AppStoreAPI", "Crypto", "Instants", "JSON"],
            path: "Sources/Server",
            // The Console's package.json only tells node (`node --check`, `node --test`) that its
            // scripts are ES modules.
            exclude: ["Console/Assets/package.json"],
            // The OpenAPI document (a link to docs/openapi.json), served at GET /openapi.json; the
            // console's page, style and ES modules, served under /console.
            resources: [
                .embedInCode("OpenAPI/openapi.json"), .embedInCode("Console/Assets/index.html"),
                .embedInCode("Console/Assets/console.css"), .embedInCode("Console/Assets/console.js"),
                .embedInCode("Console/Assets/format.js"),
            ]
        ),
        .executableTarget(
            name: "entitle",
            dependencies: ["Application", "Server", "AppStore", "AppStoreAPI", "Crypto", "Entitlements", "HTTPClient", "Instants", "JSON", "Storage"],
            path: "Sources/entitle"
        ),
        .executableTarget(
            name: "entitle-bench",
            dependencies: ["Application", "AppStore", "Crypto", "Entitlements", "JSON", "HTTP", "Server", "Storage"],
            path: "Benchmarks/entitle-bench"
        ),
        // The app's half (docs/SWIFT_CLIENT.md): Foundation only, CryptoKit on Apple platforms and
        // the package's Crypto module where there is no CryptoKit.
        .target(
            name: "EntitleKit",
            dependencies: [.target(name: "Crypto", condition: .when(platforms: [.linux]))],
            path: "Sources/EntitleKit"
        ),
        // Helpers shared by the test targets: subprocesses, temporary folders, the conformance folder.
        .target(
            name: "TestSupport",
            dependencies: ["Crypto", "Entitlements", "HTTP", "JSON", "Storage"],
            path: "Tests/TestSupport",
            exclude: [
                "make-chain.sh", "webhook-receiver.py", "console-browser.py", "run-under-unit-filter.py", "tamper-proxy.py",
                "Fixtures-README.md",
            ]
        ),
        .testTarget(name: "JSONTests", dependencies: ["JSON"], path: "Tests/JSONTests"),
        .testTarget(
            name: "CryptoTests",
            dependencies: ["Crypto", "TestSupport"],
            path: "Tests/CryptoTests"
        ),
        .testTarget(
            name: "AppStoreTests",
            dependencies: ["AppStore", "Crypto", "Entitlements", "JSON", "TestSupport"],
            path: "Tests/AppStoreTests"
        ),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "TestSupport"], path: "Tests/HTTPTests"),
        .testTarget(
            name: "AppStoreAPITests",
            dependencies: ["AppStoreAPI", "AppStore", "Crypto", "HTTP", "HTTPClient", "JSON", "TestSupport"],
            path: "Tests/AppStoreAPITests"
        ),
        .testTarget(
            name: "GooglePlayTests",
            dependencies: ["GooglePlay", "Crypto", "HTTP", "HTTPClient", "JSON", "TestSupport"],
            path: "Tests/GooglePlayTests"
        ),
        .testTarget(
            name: "ApplicationTests",
            dependencies: [
                "Application", "AppStore", "AppStoreAPI", "Crypto", "Entitlements", "GooglePlay", "HTTPClient", "Instants", "JSON",
                "TestSupport",
            ],
            path: "Tests/ApplicationTests"),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "Entitlements", "TestSupport"], path: "Tests/StorageTests"),
        .testTarget(
            name: "EntitlementsTests",
            dependencies: ["Entitlements", "AppStore", "Crypto", "Instants", "JSON", "TestSupport"],
            path: "Tests/EntitlementsTests"
        ),
        .testTarget(
            name: "EntitleKitTests",
            dependencies: ["EntitleKit", "Server", "Application", "Crypto", "HTTP", "JSON", "TestSupport"],
            path: "Tests/EntitleKitTests"
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Application", "Server", "HTTP", "AppStore", "AppStoreAPI", "Crypto", "Entitlements", "Instants", "JSON", "Storage",
                "TestSupport",
            ],
            path: "Tests/ServerTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// C targets take no Swift settings; every other target gets the same ones.
let cTargets: Set<String> = ["CShims", "CCurlShims", "CLinux"]
for target in package.targets where target.type != .system && !cTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
