#!/usr/bin/env bash
# Rebuilds the committed seed corpus, Fuzz/corpus/<harness>/: seeds from the project's own encoders and the
# golden vectors of Protocol/vectors/ (written by the harness binary itself), plus excerpts of the real export in
# Tests/Fixtures/ for the importer harnesses (cut to a few KB each, so the corpus stays small).
# Usage: Fuzz/make-corpus.sh (after Fuzz/run.sh has built the harness binary, or it builds it).
set -euo pipefail
cd "$(dirname "$0")"
export SWIFT_BACKTRACE=enable=no
[ -x .build/release/hkfuzz ] || swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
rm -rf corpus
HKFUZZ_ROOT=.. HKFUZZ_WRITE_SEEDS=corpus .build/release/hkfuzz
python3 - <<'PY'
import io, os, re, zipfile

xml = zipfile.ZipFile("../Tests/Fixtures/apple-health-export-mit/export.zip").read("apple_health_export/export.xml")
head_end = xml.index(b"<Record ")

def excerpt(start_tag, count):
    """The DOCTYPE and root start tag, `count` top-level elements from the first `start_tag`, the end tag."""
    start = xml.index(start_tag)
    body = xml[start:]
    ends = [m.end() for m in re.finditer(rb"(/>|</Record>|</Correlation>|</Workout>)\s*\n", body)]
    return xml[:head_end] + body[:ends[count - 1]] + b"</HealthData>\n"

def write(harness, name, data):
    os.makedirs(f"corpus/{harness}", exist_ok=True)
    with open(f"corpus/{harness}/{name}", "wb") as f:
        f.write(data)

samples = {
    "records": excerpt(b"<Record ", 12),
    "metadata": xml[:head_end] + xml[xml.rindex(b"<Record ", 0, xml.index(b"<MetadataEntry")):][:3000]
    .rsplit(b"</Record>", 1)[0] + b"</Record>\n</HealthData>\n",
    "bare": b'<HealthData><Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Scale" unit="lb" '
            b'startDate="20170121155300-0400" endDate="20170121155300-0400" value="150.5"/></HealthData>',
}
for name, data in samples.items():
    write("export-xml", name + ".xml", data[:12000] if len(data) > 12000 else data)

def zipped(data, method, zip64=False):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        with z.open(zipfile.ZipInfo("apple_health_export/export.xml"), "w", force_zip64=zip64) as f:
            f.write(data)
        z.writestr("apple_health_export/export_cda.xml", b"<ClinicalDocument/>")
    return out.getvalue()

small = samples["records"]
write("export-zip", "deflated.zip", zipped(small, zipfile.ZIP_DEFLATED))
write("export-zip", "stored.zip", zipped(samples["bare"], zipfile.ZIP_STORED))
write("export-zip", "zip64.zip", zipped(samples["bare"], zipfile.ZIP_DEFLATED, zip64=True))

# A real TLS ClientHello (Python's ssl over memory BIOs), after the harness's split byte.
import ssl
incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
client = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
try:
    client.do_handshake()
except ssl.SSLWantReadError:
    pass
write("tls-layer", "clienthello", bytes([7]) + outgoing.read())
PY
du -sh corpus
