package dashboard

import "net/http"

func inventoryPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "inventoryPage", "", nil)
}

func itemPage(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "itemPage", "", nil)
}

func adjustStock(s *Server, w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, v, "error", "adjustStock", "", nil)
}
