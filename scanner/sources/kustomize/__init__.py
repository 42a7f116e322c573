"""Kustomize: which overlays of a tree to render (``plan``), the inputs they may read
(``confine``), rendering in process (``native``) or with ``kustomize build``/``kubectl
kustomize`` (``external``, its version checked in ``version``), and where each rendered
object comes from (``origin``, ``locate``)."""
