"""The masked-LM filler (paper 000): replacement words for masked words, and the offline stand-in's recipe."""
