package dashboard

import "net/http"

func developersPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "developersPage", "", nil)
}

func endpointPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "endpointPage", "", nil)
}

func eventsPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "eventsPage", "", nil)
}

func createKey(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "createKey", "", nil)
}

func revokeKey(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "revokeKey", "", nil)
}

func updateWebhook(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "updateWebhook", "", nil)
}

func testWebhook(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "testWebhook", "", nil)
}

func redeliver(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "redeliver", "", nil)
}

func addEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "addEndpoint", "", nil)
}

func rotateEndpointSecret(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "rotateEndpointSecret", "", nil)
}

func deleteEndpoint(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "deleteEndpoint", "", nil)
}
