#!/bin/sh
# make-chain.sh OUTDIR [LEAF_OCSP_URL INTERMEDIATE_OCSP_URL] — mints a throwaway P-256 chain for
# the X.509 tests, fresh on every run (nothing secret is committed). Each certificate carries
# Apple's marker OID where Apple puts it; with the URLs, leaf and intermediate also name an OCSP
# responder in their Authority Information Access, as Apple's do.
#
#   root.pem           self-signed CA, 10 years
#   other-root.pem     an unrelated self-signed CA (the "wrong root")
#   intermediate.pem   CA:TRUE pathlen 0, signed by root, 5 years, OID 1.2.840.113635.100.6.2.1
#   leaf.pem           CA:FALSE, digitalSignature, signed by intermediate, 30 days, OID 1.2.840.113635.100.6.11.1
#   leaf.key           its key (P-256, PKCS#8)
#   rogue-leaf.pem     same issuer name as leaf.pem, but signed by another key (rogue.key)
#   leaf-no-oid.pem    like leaf.pem (same key) without the leaf marker OID
#   intermediate-no-oid.pem  like intermediate.pem (same key and name) without the intermediate marker OID
set -eu
cd "$1"
LEAF_AIA=""
INTERMEDIATE_AIA=""
if [ $# -ge 3 ]; then
    LEAF_AIA="authorityInfoAccess = OCSP;URI:$2"
    INTERMEDIATE_AIA="authorityInfoAccess = OCSP;URI:$3"
fi
cat > ext.cnf <<CNF
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
1.2.840.113635.100.6.2.1 = ASN1:NULL
$INTERMEDIATE_AIA
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
1.2.840.113635.100.6.11.1 = ASN1:NULL
$LEAF_AIA
[plainleaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
[plainintermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
[rogueleaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
authorityKeyIdentifier = none
1.2.840.113635.100.6.11.1 = ASN1:NULL
CNF
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key root.key; key other-root.key; key intermediate.key; key leaf.key; key rogue.key
openssl req -x509 -new -key root.key -subj "/CN=Entitle Test Root/O=Entitle Tests" -days 3650 \
    -config ext.cnf -extensions ca -out root.pem 2>/dev/null
openssl req -x509 -new -key other-root.key -subj "/CN=Entitle Other Root/O=Entitle Tests" -days 3650 \
    -config ext.cnf -extensions ca -out other-root.pem 2>/dev/null
openssl req -new -key intermediate.key -subj "/CN=Entitle Test Intermediate/O=Entitle Tests" -out intermediate.csr
openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -set_serial 2 -days 1825 \
    -extfile ext.cnf -extensions intermediate -out intermediate.pem 2>/dev/null
openssl req -new -key leaf.key -subj "/CN=Entitle Test Leaf/O=Entitle Tests" -out leaf.csr
openssl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 3 -days 30 \
    -extfile ext.cnf -extensions leaf -out leaf.pem 2>/dev/null
# The rogue issuer has the intermediate's name but its own key, so the leaf it signs names the
# real intermediate as issuer (and no key identifier to tell them apart): it fails on the signature.
openssl req -x509 -new -key rogue.key -subj "/CN=Entitle Test Intermediate/O=Entitle Tests" -days 365 \
    -config ext.cnf -extensions ca -out rogue.pem 2>/dev/null
openssl x509 -req -in leaf.csr -CA rogue.pem -CAkey rogue.key -set_serial 4 -days 30 \
    -extfile ext.cnf -extensions rogueleaf -out rogue-leaf.pem 2>/dev/null
openssl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 5 -days 30 \
    -extfile ext.cnf -extensions plainleaf -out leaf-no-oid.pem 2>/dev/null
openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -set_serial 6 -days 1825 \
    -extfile ext.cnf -extensions plainintermediate -out intermediate-no-oid.pem 2>/dev/null
openssl x509 -in leaf.pem -outform DER -out leaf.der
