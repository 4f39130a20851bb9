"""Method cards: what every explanation method and metric computes, assumes, costs and how it fails."""
import streamlit as st

from ui.views import cards

st.title("Method cards")
cards.intro()
cards.show(cards.picker())
