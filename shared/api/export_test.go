package api

import "time"

// SetPurgeFor bounds how long the server's clears of the test data delete
// (purgeTime unless set).
func (s *Server) SetPurgeFor(d time.Duration) *Server {
	s.purgeFor = d
	return s
}
