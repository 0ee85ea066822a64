"""Bolt over TLS with the official Python driver: `bolt+ssc://`, `neo4j+ssc://`, `bolt+s://` against a
certificate the client trusts, plaintext refused when TLS is required and accepted when it is optional,
a large streamed result and a transaction over TLS, and clear start-up errors for a bad certificate.
The certificate is made here with the openssl command-line tool (self-signed, for 127.0.0.1/localhost).
"""
import subprocess

import neo4j
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import ServiceUnavailable



@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    crt, key = d / "bolt.crt", d / "bolt.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True)
    return crt, key


@pytest.fixture(scope="module")
def tls_required(tmp_path_factory, cert, servers, port_factory):
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path_factory.mktemp("tls-req"), port, "--tls-cert", str(cert[0]), "--tls-key", str(cert[1]))
    yield port
    stop(proc)


def test_bolt_ssc_and_neo4j_ssc(tls_required):
    for scheme in ("bolt+ssc", "neo4j+ssc"):
        with GraphDatabase.driver(f"{scheme}://127.0.0.1:{tls_required}", auth=None) as d:
            records, summary, _ = d.execute_query("RETURN 1 AS x")
            assert records[0]["x"] == 1
            assert summary.server.protocol_version >= (5, 0)


def test_bolt_s_with_a_trusted_certificate(tls_required, cert):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{tls_required}", auth=None, encrypted=True,
                              trusted_certificates=neo4j.TrustCustomCAs(str(cert[0]))) as d:
        records, _, _ = d.execute_query("RETURN 'secure' AS x")
        assert records[0]["x"] == "secure"


def test_plaintext_is_refused_when_tls_is_required(tls_required):
    with GraphDatabase.driver(f"bolt://127.0.0.1:{tls_required}", auth=None) as d:
        with pytest.raises(ServiceUnavailable):
            d.verify_connectivity()


def test_streaming_and_transactions_over_tls(tls_required):
    with GraphDatabase.driver(f"bolt+ssc://127.0.0.1:{tls_required}", auth=None) as d:
        with d.session(fetch_size=1000) as s:
            total = 0
            for i, rec in enumerate(s.run("UNWIND range(0, 99999) AS i RETURN i, 'row ' + toString(i) AS t")):
                assert rec["i"] == i and rec["t"] == f"row {i}"
                total += 1
            assert total == 100_000
            tx = s.begin_transaction()
            tx.run("CREATE (:TlsNode {k: 1})").consume()
            tx.rollback()
            s.execute_write(lambda tx: tx.run("CREATE (:TlsNode {k: 2})").consume())
            assert s.run("MATCH (n:TlsNode) RETURN collect(n.k) AS ks").single()["ks"] == [2]


def test_optional_level_serves_both(tmp_path, cert, servers, port_factory):
    start, stop = servers
    port = port_factory()
    proc = start(tmp_path, port, "--tls-cert", str(cert[0]), "--tls-key", str(cert[1]), "--tls-level", "optional")
    try:
        for uri in (f"bolt://127.0.0.1:{port}", f"bolt+ssc://127.0.0.1:{port}"):
            with GraphDatabase.driver(uri, auth=None) as d:
                assert d.execute_query("RETURN 2 AS x").records[0]["x"] == 2
    finally:
        stop(proc)


def test_bad_certificate_is_a_clear_startup_error(tmp_path, cert, arbor_bin, port_factory):
    bogus = tmp_path / "bogus.crt"
    bogus.write_text("not a certificate\n")
    for args, expected in [
        (["--tls-cert", str(tmp_path / "missing.crt"), "--tls-key", str(cert[1])], "missing.crt"),
        (["--tls-cert", str(bogus), "--tls-key", str(cert[1])], "bogus.crt"),
        (["--tls-cert", str(cert[0]), "--tls-key", str(cert[0])], "bolt.crt"),
    ]:
        r = subprocess.run([arbor_bin, "serve", "--data", str(tmp_path / "d"), "--listen", f"127.0.0.1:{port_factory()}",
                            *args], capture_output=True, timeout=30)
        assert r.returncode != 0
        assert expected in r.stderr.decode(errors="replace"), r.stderr
