"""In-process figures of Apple's Python library (app-store-server-library), measured in the same
run as entitle-bench so the ratios of docs/PERFORMANCE.md compare like with like. Runs in the venv that
../shared/bench-peer/setup.sh makes. Prints one JSON object per line, as entitle-bench does:
  python.sign.v1, python.verify.transaction (stock: no cache with online checks off).
Usage: python_reference.py BENCH_PEER_DIR [SECONDS]"""
import json
import sys
import time
import uuid

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def rate(operation, seconds):
    for _ in range(20):
        operation()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            operation()
        count += 20
    return count / (time.perf_counter() - start)


def main():
    peer = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    with open(f"{peer}/keys/SubscriptionKey_BENCHKEY01.p8", "rb") as key:
        signer = PromotionalOfferSignatureCreator(key.read(), "BENCHKEY01", "com.example.entitle.bench")
    with open(f"{peer}/fixtures/verify-root.der", "rb") as root:
        verifier = SignedDataVerifier([root.read()], False, Environment.SANDBOX, "com.example.entitle.bench")
    with open(f"{peer}/fixtures/verify-body.json") as body:
        jws = json.load(body)["signedTransaction"]
    figures = {
        "python.sign.v1": rate(lambda: signer.create_signature("pro.monthly", "winback50",
                                                              "7e3fb20b-4cdb-47cc-936d-99d65f608138", uuid.uuid4(),
                                                              int(time.time() * 1000)), seconds),
        "python.verify.transaction": rate(lambda: verifier.verify_and_decode_signed_transaction(jws), seconds),
    }
    for name, value in figures.items():
        print(json.dumps({"name": name, "value": round(value, 1), "unit": "ops/s", "threads": 1}))


main()
