# tests/chrome.sh: headless Chromium for the picture tests (sourced, POSIX sh,
# after $tmp is set): test_report_picture.sh, test_report_dashboard.sh.
#   browser                 the Chromium binary ("" when not installed)
#   chrome ARGS...          headless, no network, no profile left behind in
#                           $tmp; its stderr goes to $tmp/chrome.err
browser=$(command -v chromium || command -v chromium-browser || true)

chrome() {
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --hide-scrollbars \
		--force-device-scale-factor=1 --user-data-dir="$tmp/profile" "$@" 2>> "$tmp/chrome.err"
}
