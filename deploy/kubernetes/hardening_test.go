package kubernetes

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// tokenPath is where a pod's service account token is mounted, automatically or by hand.
const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// hardening lists what a Job's pod lacks of the hardening every pod here must have: seccomp
// RuntimeDefault and a non-root user for the pod; no privilege escalation, no capabilities and a
// read-only root filesystem for every container, with /tmp an emptyDir; no automounted service
// account token, and a hand-mounted one only in the containers listed in tokenFor.
func hardening(job *batchv1.Job, tokenFor ...string) []string {
	var out []string
	ps := job.Spec.Template.Spec
	if sc := ps.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		out = append(out, "pod: seccompProfile is not RuntimeDefault")
	}
	if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		out = append(out, "pod: runAsNonRoot is not true")
	}
	if a := ps.AutomountServiceAccountToken; a == nil || *a {
		out = append(out, "pod: automountServiceAccountToken is not false")
	}
	vols := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		vols[v.Name] = v
	}
	for _, c := range append(append([]corev1.Container{}, ps.InitContainers...), ps.Containers...) {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			out = append(out, c.Name+": allowPrivilegeEscalation is not false")
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			out = append(out, c.Name+": readOnlyRootFilesystem is not true")
		}
		if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			out = append(out, c.Name+": capabilities do not drop ALL (or add some)")
		}
		tmp := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/tmp" && vols[m.Name].EmptyDir != nil {
				tmp = true
			}
			if m.MountPath == tokenPath && !slices.Contains(tokenFor, c.Name) {
				out = append(out, c.Name+": mounts a service account token it does not need")
			}
		}
		if !tmp {
			out = append(out, c.Name+": /tmp is not an emptyDir (the root filesystem is read-only)")
		}
	}
	return out
}

// TestManifestsHardened: both Jobs' pods are hardened, and only the verify Job's wait holds an API
// token (projected by hand, since automounting is off). The controls strip one setting at a time
// from a copy and the check names it.
func TestManifestsHardened(t *testing.T) {
	objs := manifests(t)
	agents := get[*batchv1.Job](t, objs, "Job/seqgate-agents")
	verify := get[*batchv1.Job](t, objs, "Job/seqgate-verify")
	if bad := hardening(agents); len(bad) > 0 {
		t.Errorf("agents Job: %q", bad)
	}
	if bad := hardening(verify, "wait-for-agents"); len(bad) > 0 {
		t.Errorf("verify Job: %q", bad)
	}
	if sa := get[*corev1.ServiceAccount](t, objs, "ServiceAccount/seqgate-verify"); sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("service account seqgate-verify: automountServiceAccountToken is not false")
	}
	yes := true
	for _, tc := range []struct {
		name  string
		strip func(ps *corev1.PodSpec)
	}{
		{"seccomp", func(ps *corev1.PodSpec) { ps.SecurityContext.SeccompProfile = nil }},
		{"automount", func(ps *corev1.PodSpec) { ps.AutomountServiceAccountToken = nil }},
		{"escalation", func(ps *corev1.PodSpec) { ps.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes }},
		{"read-only root", func(ps *corev1.PodSpec) { ps.Containers[0].SecurityContext.ReadOnlyRootFilesystem = nil }},
		{"capabilities", func(ps *corev1.PodSpec) { ps.Containers[0].SecurityContext.Capabilities.Drop = nil }},
		{"tmp", func(ps *corev1.PodSpec) { ps.Containers[0].VolumeMounts = ps.Containers[0].VolumeMounts[:1] }},
		{"token", func(ps *corev1.PodSpec) {
			ps.Containers[0].VolumeMounts = append(ps.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "api-token", MountPath: tokenPath})
		}},
	} {
		job := get[*batchv1.Job](t, manifests(t), "Job/seqgate-verify")
		tc.strip(&job.Spec.Template.Spec)
		if len(hardening(job, "wait-for-agents")) == 0 {
			t.Errorf("control %s: the stripped Job passes", tc.name)
		}
	}
}
