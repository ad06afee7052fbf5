package mcp

func (s *Server) registerMore() {}
