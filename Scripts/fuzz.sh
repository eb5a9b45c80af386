#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) with the address sanitizer and runs each for a while on
# its seed corpus (Fuzz/Corpus/<target>), e.g.
#   Scripts/fuzz.sh                 # every target, 60 s each
#   Scripts/fuzz.sh 20              # every target, 20 s each (CI)
#   Scripts/fuzz.sh 300 json        # one target
# A crash stops the run with the input saved as .build/fuzz/crash-*; reproduce it with
#   .build/fuzz/<target> .build/fuzz/crash-…
# New inputs libFuzzer finds go to .build/fuzz/corpus-<target> (the checked-in seeds stay as they are).
set -euo pipefail
# A crash is reported by the sanitizer; Swift's own interactive backtracer would wait on it.
export SWIFT_BACKTRACE=enable=no
cd "$(dirname "$0")/.."
seconds="${1:-60}"
only="${2:-}"
out=.build/fuzz
mkdir -p "$out"
# The package's modules share declarations with `package` access: every module built here is one
# package, as SwiftPM builds them, with the same upcoming features.
flags=(-sanitize=fuzzer,address -parse-as-library -Onone -swift-version 6 -package-name entitle
       -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -enable-upcoming-feature MemberImportVisibility)

# JSON as a module of its own (Crypto imports it; the JSON target links it).
swiftc "${flags[@]}" -wmo -module-name JSON -emit-module -emit-module-path "$out/JSON.swiftmodule" \
    -emit-object -o "$out/JSON.o" Sources/JSON/*.swift
# Crypto, with OpenSSL through the same C module and shims the package uses.
cat > "$out/CShims.modulemap" <<MAP
module CShims { header "$PWD/Sources/CShims/include/CShims.h" export * }
MAP
clang -fsanitize=address,fuzzer-no-link -g -O1 -DOPENSSL_API_COMPAT=30000 -DOPENSSL_NO_DEPRECATED \
    -I Sources/CShims/include -c Sources/CShims/CShims.c -o "$out/CShims.o"
swiftc "${flags[@]}" -wmo -module-name Crypto -I "$out" -I Sources/COpenSSL -Xcc -fmodule-map-file="$out/CShims.modulemap" \
    -emit-module -emit-module-path "$out/Crypto.swiftmodule" -emit-object -o "$out/Crypto.o" Sources/Crypto/*.swift

# The targets. The HTTP parser is pure Swift: its sources are compiled into the target itself.
swiftc "${flags[@]}" -module-name FuzzHTTPParser -o "$out/http-parser" Fuzz/HTTPParser/FuzzHTTPParser.swift \
    Sources/HTTP/HTTPParser.swift Sources/HTTP/HTTPHeadParser.swift Sources/HTTP/ChunkedDecoder.swift Sources/HTTP/HTTPRequest.swift
swiftc "${flags[@]}" -module-name FuzzJSON -I "$out" -o "$out/json" Fuzz/JSON/FuzzJSON.swift "$out/JSON.o"
swiftc "${flags[@]}" -module-name FuzzDecoding -I "$out" -I Sources/COpenSSL -Xcc -fmodule-map-file="$out/CShims.modulemap" \
    -o "$out/decoding" Fuzz/Decoding/FuzzDecoding.swift "$out/Crypto.o" "$out/JSON.o" "$out/CShims.o" -lcrypto
# The modules below the use cases, each once: Instants, AppStore, Entitlements, and for the
# configuration's Google Play members HTTPClient (libcurl through the package's shims) and GooglePlay.
cat > "$out/CCurlShims.modulemap" <<MAP
module CCurlShims { header "$PWD/Sources/CCurlShims/include/CCurlShims.h" export * }
MAP
clang -fsanitize=address,fuzzer-no-link -g -O1 -I Sources/CCurlShims/include -c Sources/CCurlShims/CCurlShims.c -o "$out/CCurlShims.o"
c_modules=(-I "$out" -I Sources/COpenSSL -I Sources/CCurl -Xcc -fmodule-map-file="$out/CShims.modulemap"
           -Xcc -fmodule-map-file="$out/CCurlShims.modulemap")
module() {  # name, sources...
    local name="$1"; shift
    swiftc "${flags[@]}" -wmo -module-name "$name" "${c_modules[@]}" -emit-module -emit-module-path "$out/$name.swiftmodule" \
        -emit-object -o "$out/$name.o" "$@"
}
module Instants Sources/Instants/*.swift
module AppStore $(find Sources/AppStore -name '*.swift')
module Entitlements $(find Sources/Entitlements -name '*.swift')
module HTTPClient Sources/HTTPClient/*.swift
module GooglePlay Sources/GooglePlay/*.swift
domain=("$out/JSON.o" "$out/Crypto.o" "$out/Instants.o" "$out/AppStore.o" "$out/Entitlements.o" "$out/CShims.o")

# Query strings and times: QueryString, compiled into the target, over the Instants module.
swiftc "${flags[@]}" -module-name FuzzInstants -I "$out" -o "$out/instants" Fuzz/Instants/FuzzInstants.swift \
    Sources/HTTP/QueryString.swift "$out/Instants.o" "$out/JSON.o"
# The usage body and the configuration: the Application sources that read them, compiled into the target.
swiftc "${flags[@]}" -module-name FuzzUsage "${c_modules[@]}" -o "$out/usage" Fuzz/Usage/FuzzUsage.swift \
    Sources/Application/Refunds/UsageRequest.swift Sources/Application/Errors/ServiceError.swift "${domain[@]}" -lcrypto
swiftc "${flags[@]}" -module-name FuzzConfiguration "${c_modules[@]}" -o "$out/configuration" Fuzz/Configuration/FuzzConfiguration.swift \
    Sources/Application/Configuration/*.swift Sources/Application/Access/RateLimiter.swift Sources/Application/Errors/ServiceError.swift \
    "${domain[@]}" "$out/HTTPClient.o" "$out/GooglePlay.o" "$out/CCurlShims.o" -lcrypto -lcurl

for target in http-parser json decoding instants usage configuration; do
    [ -n "$only" ] && [ "$only" != "$target" ] && continue
    mkdir -p "$out/corpus-$target"
    echo "fuzzing $target for ${seconds}s"
    (cd "$out" && SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "./$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
        -print_final_stats=1 "corpus-$target" "$OLDPWD/Fuzz/Corpus/$target" 2>&1 | tail -n 12)
done
