#!/bin/sh
# Apache in front of `git http-backend` on loopback: the real server a history remote sits behind,
# for `make stress` and `make bench` (apache2 from scripts/packages.sh, PG_STRESS_PACKAGES).
#
#   sh apache_git.sh start RUNDIR ROOT TOKEN   serve the bare repositories under ROOT as
#       http://127.0.0.1:PORT/<name>.git, smart http with receive-pack, GitHub's token auth
#       (Basic x-access-token:TOKEN); the port in RUNDIR/port, requests in RUNDIR/access.log
#       ("METHOD PATH PROTOCOL STATUS BYTES MICROSECONDS"), errors in RUNDIR/error.log, the main
#       process's pid in RUNDIR/httpd.pid. Exit 0 once it answers; 2 when apache2 is missing; 1
#       when it did not start (error.log says why).
#   sh apache_git.sh stop RUNDIR               stop it and wait until it is gone.
#
# Everything Apache writes is under RUNDIR, and it listens on 127.0.0.1 alone. The configuration
# is Debian's defaults where they matter for git (event MPM, KeepAliveTimeout 5 s counted only
# between requests, Timeout 300 s) with room for 128 clients at once. Apache will not serve as
# root, so under root its workers run as www-data: ROOT and RUNDIR are made readable and writable
# for them, the folders above them that root owns searchable (a mktemp folder is not), each
# repository core.sharedRepository=world (what root's own git adds later stays writable), and the
# CGI's git trusts repositories it does not own (safe.directory).
set -u

APACHE=${PG_APACHE:-/usr/sbin/apache2}
MODS=${PG_APACHE_MODULES:-/usr/lib/apache2/modules}
BACKEND="$(git --exec-path)/git-http-backend"

usage() {
	echo "usage: sh apache_git.sh start RUNDIR ROOT TOKEN | stop RUNDIR" >&2
	exit 2
}

# searchable DIR: DIR and every folder above it that this user owns, searchable by all.
searchable() {
	d=$1
	while [ "$d" != / ] && [ -n "$d" ]; do
		[ -O "$d" ] && chmod a+x "$d"
		d=$(dirname "$d")
	done
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# answers PORT: the server answers an unauthenticated request (401 is an answer).
answers() {
	python3 - "$1" <<'EOF' 2>/dev/null
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
c.request("GET", "/")
sys.exit(0 if c.getresponse().status in (200, 401, 404) else 1)
EOF
}

start() {
	run=$1 root=$2 token=$3
	if [ ! -x "$APACHE" ] || [ ! -f "$MODS/mod_cgid.so" ]; then
		echo "apache_git: $APACHE (Debian's apache2) is not installed" >&2
		exit 2
	fi
	[ -x "$BACKEND" ] || { echo "apache_git: $BACKEND is missing" >&2; exit 2; }
	mkdir -p "$run"
	run=$(cd "$run" && pwd)
	root=$(cd "$root" && pwd)
	port=$(free_port)
	user=
	if [ "$(id -u)" = 0 ]; then
		user="User www-data
Group www-data"
		chmod -R a+rwX "$root"
		chmod a+rx "$run"
		searchable "$root"
		searchable "$run"
		for r in "$root"/*.git; do
			[ -d "$r" ] && git --git-dir="$r" config core.sharedRepository world
		done
	fi
	printf '[safe]\n\tdirectory = *\n' >"$run/gitconfig"
	printf 'x-access-token:%s\n' "$(openssl passwd -apr1 "$token")" >"$run/htpasswd"
	chmod a+r "$run/gitconfig" "$run/htpasswd"
	cat >"$run/httpd.conf" <<EOF
ServerRoot "$run"
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile "$run/httpd.pid"
DefaultRuntimeDir "$run"
Mutex file:$run default
ScriptSock "$run/cgid.sock"
ErrorLog "$run/error.log"
LogLevel warn
LogFormat "%r %>s %B %D" git
CustomLog "$run/access.log" git
$user
LoadModule mpm_event_module $MODS/mod_mpm_event.so
LoadModule authz_core_module $MODS/mod_authz_core.so
LoadModule authn_core_module $MODS/mod_authn_core.so
LoadModule authn_file_module $MODS/mod_authn_file.so
LoadModule auth_basic_module $MODS/mod_auth_basic.so
LoadModule authz_user_module $MODS/mod_authz_user.so
LoadModule alias_module $MODS/mod_alias.so
LoadModule env_module $MODS/mod_env.so
LoadModule cgid_module $MODS/mod_cgid.so
Timeout 300
KeepAlive On
KeepAliveTimeout 5
MaxKeepAliveRequests 100
StartServers 2
ServerLimit 8
ThreadsPerChild 32
MaxRequestWorkers 256
SetEnv GIT_PROJECT_ROOT "$root"
SetEnv GIT_HTTP_EXPORT_ALL 1
SetEnv GIT_CONFIG_GLOBAL "$run/gitconfig"
SetEnv GIT_CONFIG_NOSYSTEM 1
ScriptAlias / "$BACKEND/"
<Location />
	AuthType Basic
	AuthName "git"
	AuthUserFile "$run/htpasswd"
	Require valid-user
</Location>
EOF
	rm -f "$run/port" "$run/httpd.pid"
	if ! "$APACHE" -d "$run" -f "$run/httpd.conf" -k start 2>>"$run/error.log"; then
		echo "apache_git: apache2 did not start: $(tail -n 3 "$run/error.log" | tr '\n' ' ')" >&2
		exit 1
	fi
	i=0
	while ! answers "$port" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if ! answers "$port"; then
		echo "apache_git: apache2 does not answer on port $port: $(tail -n 3 "$run/error.log" | tr '\n' ' ')" >&2
		stop "$run"
		exit 1
	fi
	echo "$port" >"$run/port"
}

stop() {
	run=$1
	[ -s "$run/httpd.pid" ] || return 0
	pid=$(cat "$run/httpd.pid")
	kill -TERM "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$pid" 2>/dev/null
	rm -f "$run/httpd.pid"
	return 0
}

case ${1:-} in
start) [ $# -eq 4 ] || usage; start "$2" "$3" "$4" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
