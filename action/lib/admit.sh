#!/usr/bin/env bash
# Admits this job's runner to the bench, and withdraws it again.
#
# Each job of a workflow runs on its own runner: "When the job begins, GitHub
# automatically provisions a new VM for that job ... When the job has finished, the VM is
# automatically decommissioned" (GitHub docs, "Using a GitHub-hosted runner"), and its
# public address is one of a shared, changing pool. The bench admits no address of its
# own accord (provision with LG_ADMIT_RUNNER=false), so a job that talks to it
# (Prometheus, Grafana, the agents' API) adds its /32 to the controller's ports, the
# infra output controller_ingress, at its start, and removes exactly the rules it added
# at its end (an always() step).
#
# env: LG_ADMIT_MODE (open|close), AWS_REGION; open also LG_CONTROLLER_INGRESS (provision's
# controller-ingress output: [{security_group_id, ip_protocol, from_port, to_port,
# description}]) and optionally LG_CONTROLLER_IP (default: checkip.amazonaws.com).
# open records the rules it added in $LOADGATE_WORK/admitted-rules.tsv for close.
# shellcheck source=action/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
: "${AWS_REGION:?configure AWS credentials first (aws-actions/configure-aws-credentials sets AWS_REGION)}"
added="$LOADGATE_WORK/admitted-rules.tsv"

case "${LG_ADMIT_MODE:-}" in
  open)
    : "${LG_CONTROLLER_INGRESS:?controller-ingress: the output of the provision job (the controller ports of the bench)}"
    ip="$(runner_address)" || exit 3
    : > "$added"
    # One line per rule: group, protocol, from port, to port, description (checked here:
    # they come from another job's output).
    rules="$(node -e '
      const rules = JSON.parse(process.argv[1]);
      if (!Array.isArray(rules) || !rules.length) throw new Error("controller-ingress: expected a non-empty JSON array");
      for (const r of rules) {
        if (!/^sg-[0-9a-f]{8,17}$/.test(r.security_group_id) || !["tcp", "udp"].includes(r.ip_protocol ?? "tcp")
          || !Number.isInteger(r.from_port) || !Number.isInteger(r.to_port) || /[\t\n]/.test(r.description ?? "")) {
          throw new Error("controller-ingress: not a controller rule: " + JSON.stringify(r).slice(0, 200));
        }
        process.stdout.write([r.security_group_id, r.ip_protocol ?? "tcp", r.from_port, r.to_port, r.description ?? ""].join("\t") + "\n");
      }
    ' "$LG_CONTROLLER_INGRESS")"
    # Tagged at creation: the role may create only resources tagged Project=loadgate
    # (infra/iam/github-role-policy.json, CreateTagged and TagOnCreate).
    tags="[{\"ResourceType\":\"security-group-rule\",\"Tags\":[{\"Key\":\"Project\",\"Value\":\"loadgate\"},{\"Key\":\"Name\",\"Value\":\"loadgate-runner-${GITHUB_RUN_ID:-local}-${GITHUB_JOB:-job}\"}]}]"
    while IFS=$'\t' read -r group protocol from to description; do
      permissions="$(node -e 'const [p, f, t, ip, d] = process.argv.slice(1); process.stdout.write(JSON.stringify([{ IpProtocol: p, FromPort: Number(f), ToPort: Number(t), IpRanges: [{ CidrIp: `${ip}/32`, Description: `${d} (runner of ${process.env.GITHUB_JOB || "this job"})`.slice(0, 255) }] }]))' "$protocol" "$from" "$to" "$ip" "$description")"
      if answer="$(aws ec2 authorize-security-group-ingress --region "$AWS_REGION" --group-id "$group" --ip-permissions "$permissions" --tag-specifications "$tags" --output json 2> "$LOADGATE_WORK/admit.err")"; then
        rule="$(node -e 'const id = JSON.parse(process.argv[1]).SecurityGroupRules?.[0]?.SecurityGroupRuleId; if (!/^sgr-[0-9a-f]+$/.test(id ?? "")) process.exit(1); process.stdout.write(id)' "$answer")" || {
          echo "::error::authorize-security-group-ingress on $group answered without a rule id" >&2
          exit 1
        }
        printf '%s\t%s\n' "$group" "$rule" >> "$added"
      elif grep -q 'InvalidPermission.Duplicate' "$LOADGATE_WORK/admit.err"; then
        # Someone else's rule (the bench's controller_cidr_blocks): used, never removed.
        echo "$ip is already admitted to $group ports $from-$to; leaving that rule alone"
      else
        echo "::error::cannot admit this runner ($ip) to $group ports $from-$to: $(tail -n 1 "$LOADGATE_WORK/admit.err")" >&2
        exit 1
      fi
    done <<< "$rules"
    echo "admitted this runner ($ip/32) to the bench: $(wc -l < "$added") rule(s) added"
    set_output cidr "$ip/32"
    ;;
  close)
    if [ ! -s "$added" ]; then
      echo "this job added no rule to the bench's security groups"
      exit 0
    fi
    # A rule that cannot be removed is left to teardown, which deletes its group; the
    # job's result stays the gate's.
    while IFS=$'\t' read -r group rule; do
      if aws ec2 revoke-security-group-ingress --region "$AWS_REGION" --group-id "$group" --security-group-rule-ids "$rule" --output json > /dev/null 2> "$LOADGATE_WORK/admit.err"; then
        echo "withdrew $rule from $group"
      else
        echo "::warning::could not withdraw $rule from $group (teardown deletes the group): $(tail -n 1 "$LOADGATE_WORK/admit.err")"
      fi
    done < "$added"
    rm -f "$added"
    ;;
  *)
    echo "::error::admit mode: expected open or close" >&2
    exit 3
    ;;
esac
