"""GitOps entry points: the Flux and Argo CD objects of the scanned sources decide what is rendered
from which folder and how (``objects``), found across sources until nothing new appears
(``discover``), and rendered as the controller would (``render``)."""
