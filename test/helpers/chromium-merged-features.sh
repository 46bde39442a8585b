#!/bin/sh
# Runs Debian's Chromium with every --disable-features and --enable-features argument merged into
# one of each: Chromium keeps only the last of a repeated switch, so a feature list of our own
# after playwright's would silently turn playwright's back on.
disabled=''
enabled=''
for arg do
  shift
  case $arg in
    --disable-features=*) disabled="$disabled${disabled:+,}${arg#--disable-features=}" ;;
    --enable-features=*) enabled="$enabled${enabled:+,}${arg#--enable-features=}" ;;
    *) set -- "$@" "$arg" ;;
  esac
done
exec /usr/bin/chromium ${disabled:+"--disable-features=$disabled"} ${enabled:+"--enable-features=$enabled"} "$@"
