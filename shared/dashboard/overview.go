package dashboard

import "net/http"

func overviewPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "overviewPage", "", nil)
}
