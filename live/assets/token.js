// Runs before each page's own script (live.js, launch.js): a token that
// came in the URL now rides in the cookie the page's own load set
// (HttpOnly), so take it out of the address bar, the history and
// whatever a screen share shows.
(function () {
  "use strict";
  var u = new URL(location.href);
  if (u.searchParams.has("token")) {
    u.searchParams.delete("token");
    history.replaceState(null, "", u.pathname + u.search + u.hash);
  }
})();
