package dashboard

import "net/http"

func settingsPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "settingsPage", "", nil)
}

func updateSettings(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "updateSettings", "", nil)
}
