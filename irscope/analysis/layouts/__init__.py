"""TTGIR layouts: which warp, lane and register of a CTA hold each element of a tensor."""
