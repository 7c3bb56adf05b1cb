#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the repository's git hooks (scripts/hooks/) into this clone: commit-msg checks the
# commit-subject rule of CONTRIBUTING.md (scripts/check-commits.sh) as you commit.
set -euo pipefail
cd "$(dirname "$0")/.."
git config core.hooksPath scripts/hooks
echo "hooks installed: git now runs scripts/hooks/commit-msg on every commit"
