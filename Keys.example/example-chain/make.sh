#!/bin/sh
# Made Keys.example/example-chain once (its output is committed): a private signing chain for the
# example only, shaped like Apple's (P-256, Apple's marker OIDs on intermediate and leaf), so that
# `entitle example-data` can sign transactions and notifications the example configuration
# verifies, with no network. Published on purpose: it proves nothing to anyone else, and a real
# configuration never trusts it (only Apple's roots, without verification.allowPrivateRoots).
set -eu
cd "$(dirname "$0")"
cat > ext.cnf <<CNF
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
1.2.840.113635.100.6.2.1 = ASN1:NULL
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
1.2.840.113635.100.6.11.1 = ASN1:NULL
CNF
for name in root intermediate leaf; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key"; done
openssl req -x509 -new -key root.key -subj "/CN=Entitle Example Root (not Apple, not secret)/O=Entitle example" \
    -days 10950 -config ext.cnf -extensions ca -out root.pem
openssl req -new -key intermediate.key -subj "/CN=Entitle Example Intermediate/O=Entitle example" -out intermediate.csr
openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -set_serial 2 -days 9125 \
    -extfile ext.cnf -extensions intermediate -out intermediate.pem
openssl req -new -key leaf.key -subj "/CN=Entitle Example Signing Leaf/O=Entitle example" -out leaf.csr
openssl x509 -req -in leaf.csr -CA intermediate.pem -CAkey intermediate.key -set_serial 3 -days 7300 \
    -extfile ext.cnf -extensions leaf -out leaf.pem
# Only the leaf's key is kept: nothing else is ever signed with this chain.
rm -f root.key intermediate.key ext.cnf ./*.csr
