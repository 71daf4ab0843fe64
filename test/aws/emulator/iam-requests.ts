import type { LoggedCall } from './call-log.ts';

/**
 * What IAM evaluates for one logged API call: the action on each resource it
 * touches, with the condition keys AWS sets for it. Modelled on the Service
 * Authorization Reference (docs.aws.amazon.com/service-authorization/latest/
 * reference/list_amazonec2.html and the RDS, IAM, KMS, Secrets Manager,
 * CloudWatch Logs, OpenSearch and S3 pages):
 *   - a create with tags is authorised on the new resource with aws:RequestTag
 *     and aws:TagKeys, and EC2 also checks ec2:CreateTags with ec2:CreateAction;
 *     RDS (rds:AddTagsToResource), KMS (kms:TagResource) and Secrets Manager
 *     (secretsmanager:TagResource) check their tagging action as well;
 *   - an action on an existing resource is authorised on it, with the tags it
 *     carries as aws:ResourceTag (known here from the calls that created it);
 *   - RunInstances is authorised on the instance and on every image, subnet,
 *     security group, key pair, network interface and volume it uses, and
 *     passes the instance profile's role (iam:PassRole);
 *   - creating an Aurora cluster in a fresh account creates RDS's
 *     service-linked role (iam:CreateServiceLinkedRole);
 *   - Service Quotas reads are authorised on the quota, or on "*" for AWS's defaults.
 */

export interface IamRequest {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
  /** Why this request is made, for messages: the API call it comes from. */
  call: string;
}

export interface Account {
  id: string;
  region: string;
}

/** Tags of the resources created so far, by ID and by name. */
export type TagRegistry = Map<string, Record<string, string>>;

const tagContext = (tags: Record<string, string>, prefix: 'aws:RequestTag' | 'aws:ResourceTag'): Record<string, string | string[]> => {
  const context: Record<string, string | string[]> = Object.fromEntries(Object.entries(tags).map(([k, v]) => [`${prefix}/${k}`, v]));
  if (prefix === 'aws:RequestTag' && Object.keys(tags).length) context['aws:TagKeys'] = Object.keys(tags);
  return context;
};

/** EC2 ID prefixes and the resource types of their ARNs. */
const EC2_TYPES: Record<string, string> = {
  vpc: 'vpc',
  subnet: 'subnet',
  igw: 'internet-gateway',
  rtb: 'route-table',
  nat: 'natgateway',
  eipalloc: 'elastic-ip',
  sg: 'security-group',
  sgr: 'security-group-rule',
  i: 'instance',
  ami: 'image',
  eni: 'network-interface',
  vol: 'volume',
};

/** What each EC2 create call makes, and the ID field of its response. */
const EC2_CREATES: Record<string, string> = {
  CreateVpc: 'vpc',
  CreateSubnet: 'subnet',
  CreateInternetGateway: 'internet-gateway',
  CreateRouteTable: 'route-table',
  CreateNatGateway: 'natgateway',
  AllocateAddress: 'elastic-ip',
  CreateSecurityGroup: 'security-group',
  RunInstances: 'instance',
  AuthorizeSecurityGroupIngress: 'security-group-rule',
  AuthorizeSecurityGroupEgress: 'security-group-rule',
};

const strings = (params: Record<string, unknown>, pattern: RegExp): string[] =>
  Object.entries(params)
    .filter(([k, v]) => pattern.test(k) && typeof v === 'string')
    .map(([, v]) => v as string);

/** Where an EC2 association ID (rtbassoc-, eipassoc-) points: the table and subnet, or the address. */
const ASSOCIATION = 'association:';

/** Records, from EC2 describe and associate answers, the resources behind each association ID. */
function recordAssociations(call: LoggedCall, registry: TagRegistry): void {
  if (call.service !== 'ec2') return;
  for (const item of call.response.matchAll(/<item>((?:(?!<item>)[\s\S])*?)<\/item>/g)) {
    const body = item[1]!;
    const association = /<(?:routeTableAssociationId|associationId)>((?:rtbassoc|eipassoc)-[0-9a-f]+)</.exec(body)?.[1];
    if (!association) continue;
    const targets = [...body.matchAll(/<(?:routeTableId|subnetId|allocationId)>((?:rtb|subnet|eipalloc)-[0-9a-f]+)</g)].map((m) => m[1]!);
    if (targets.length) registry.set(`${ASSOCIATION}${association}`, Object.fromEntries(targets.map((t) => [t, t])));
  }
  const direct = /<associationId>((?:rtbassoc|eipassoc)-[0-9a-f]+)</.exec(call.response)?.[1];
  if (direct && call.action === 'AssociateRouteTable') {
    const targets = [call.params.RouteTableId, call.params.SubnetId].filter((v): v is string => typeof v === 'string');
    registry.set(`${ASSOCIATION}${direct}`, Object.fromEntries(targets.map((t) => [t, t])));
  }
}

/** Records the tags of what a call created, keyed by every ID in its response and its name parameters. */
export function recordCreated(call: LoggedCall, registry: TagRegistry): void {
  recordAssociations(call, registry);
  if (!Object.keys(call.requestTags).length || call.status >= 300) return;
  const ids = new Set<string>();
  for (const match of call.response.matchAll(/\b((?:vpc|subnet|igw|rtb|nat|eipalloc|sg|sgr|i)-[0-9a-f]{8,17})\b/g)) ids.add(match[1]!);
  for (const match of call.response.matchAll(/"(?:KeyId|ARN|Arn|ARN)"\s*:\s*"([^"]+)"/g)) ids.add(match[1]!);
  for (const field of [
    'DBClusterIdentifier',
    'DBInstanceIdentifier',
    'DBSubnetGroupName',
    'DBClusterParameterGroupName',
    'RoleName',
    'InstanceProfileName',
    'Name',
    'logGroupName',
    'DomainName',
  ]) {
    const value = call.params[field];
    if (typeof value === 'string') ids.add(value);
  }
  // Only a call that creates one thing names it; a tagging call names existing ones.
  if (call.action === 'CreateTags' || call.action === 'AddTagsToResource' || call.action === 'TagResource') return;
  for (const id of ids) registry.set(id, { ...(registry.get(id) ?? {}), ...call.requestTags });
}

const lookupTags = (registry: TagRegistry, ...keys: string[]): Record<string, string> => {
  for (const key of keys) {
    const tags = registry.get(key);
    if (tags) return tags;
  }
  return {};
};

/** The IAM requests one call makes; undefined for a call this model does not know (a test failure). */
export function iamRequests(call: LoggedCall, account: Account, registry: TagRegistry): IamRequest[] | undefined {
  const arn = (service: string, resource: string, region = account.region, acct = account.id): string => `arn:aws:${service}:${region}:${acct}:${resource}`;
  const label = `${call.service} ${call.action}`;
  const on = (action: string, resource: string, context: Record<string, string | string[]> = {}): IamRequest => ({ action, resource, context, call: label });
  const p = call.params;
  const str = (key: string): string | undefined => (typeof p[key] === 'string' ? (p[key] as string) : undefined);
  const requested = tagContext(call.requestTags, 'aws:RequestTag');
  const hasTags = Object.keys(call.requestTags).length > 0;

  switch (call.service) {
    case 'sts':
      return [on(`sts:${call.action}`, '*')];
    case 'tagging':
      return [on(`tag:${call.action}`, '*')];
    case 'ssm':
      // The invocation reads and CancelCommand are authorised on no resource (Service
      // Authorization Reference, list_awssystemsmanager.html). SendCommand is left out: its
      // AWS-owned document's ARN has no account, which the simulator's ARN patterns lack.
      return call.action === 'SendCommand' ? undefined : [on(`ssm:${call.action}`, '*')];
    case 's3': {
      const [bucket, ...key] = call.path.split('/').filter(Boolean);
      if (call.action === 'ListBucket') return [on('s3:ListBucket', `arn:aws:s3:::${bucket}`, { 's3:prefix': String(p.prefix ?? '') })];
      return [on(`s3:${call.action}`, `arn:aws:s3:::${bucket}/${decodeURIComponent(key.join('/'))}`)];
    }
    case 'ec2':
      return ec2Requests(call, account, registry, on, arn, requested, hasTags);
    case 'rds': {
      const rds = (type: string, id: string): string => arn('rds', `${type}:${id}`);
      const idOf: Array<[string, string]> = [
        ['DBInstanceIdentifier', 'db'],
        ['DBClusterIdentifier', 'cluster'],
        ['DBSubnetGroupName', 'subgrp'],
        ['DBClusterParameterGroupName', 'cluster-pg'],
      ];
      if (call.action.startsWith('Describe')) return [on(`rds:${call.action}`, '*')];
      if (call.action === 'ListTagsForResource' || call.action === 'AddTagsToResource' || call.action === 'RemoveTagsFromResource') {
        const resource = str('ResourceName') ?? '*';
        const context = call.action === 'AddTagsToResource' ? requested : {};
        return [on(`rds:${call.action}`, resource, { ...context, ...tagContext(lookupTags(registry, resource.split(':').pop() ?? ''), 'aws:ResourceTag') })];
      }
      const [field, type] = idOf.find(([f]) => str(f)) ?? [];
      if (!field || !type) return undefined;
      const id = str(field)!;
      const isCreate = /^(Create|Restore)/.test(call.action);
      const requests = [on(`rds:${call.action}`, rds(type, id), isCreate ? requested : tagContext(lookupTags(registry, id), 'aws:ResourceTag'))];
      if (isCreate && hasTags) requests.push(on('rds:AddTagsToResource', rds(type, id), requested));
      const snapshot = str('SnapshotIdentifier');
      if (call.action === 'RestoreDBClusterFromSnapshot' && snapshot)
        requests.push(on(call.action.replace(/^/, 'rds:'), snapshot.startsWith('arn:') ? snapshot : rds('cluster-snapshot', snapshot)));
      // manage_master_user_password: RDS creates the rds!cluster-... secret as the caller.
      if (str('ManageMasterUserPassword') === 'true') {
        const secret = arn('secretsmanager', 'secret:rds!cluster-new-AbCdEf');
        requests.push(on('secretsmanager:CreateSecret', secret), on('secretsmanager:TagResource', secret));
      }
      if (call.action === 'CreateDBCluster' || call.action === 'RestoreDBClusterFromSnapshot') {
        requests.push(
          on('iam:CreateServiceLinkedRole', `arn:aws:iam::${account.id}:role/aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS`, {
            'iam:AWSServiceName': 'rds.amazonaws.com',
          }),
        );
      }
      return requests;
    }
    case 'iam': {
      const iam = (resource: string): string => `arn:aws:iam::${account.id}:${resource}`;
      const role = str('RoleName');
      const profile = str('InstanceProfileName');
      if (call.action === 'CreateServiceLinkedRole') {
        const service = str('AWSServiceName') ?? '';
        return [on('iam:CreateServiceLinkedRole', iam(`role/aws-service-role/${service}/*`), { 'iam:AWSServiceName': service })];
      }
      const requests: IamRequest[] = [];
      const context: Record<string, string | string[]> = { ...(hasTags ? requested : {}) };
      if (str('PolicyArn')) context['iam:PolicyARN'] = str('PolicyArn')!;
      // Instance-profile actions are authorised on the profile only, even when they name a role.
      if (profile) requests.push(on(`iam:${call.action}`, iam(`instance-profile/${profile}`), context));
      else if (role) requests.push(on(`iam:${call.action}`, iam(`role/${role}`), context));
      if (!requests.length) return call.action.startsWith('List') ? [on(`iam:${call.action}`, '*')] : undefined;
      return requests;
    }
    case 'kms': {
      const keyId = str('KeyId') ?? str('TargetKeyId');
      const key = (id: string): string => (id.startsWith('arn:') ? id : arn('kms', `key/${id}`));
      if (call.action === 'CreateKey') {
        const requests = [on('kms:CreateKey', '*', requested)];
        if (hasTags) requests.push(on('kms:TagResource', arn('kms', 'key/new'), requested));
        return requests;
      }
      if (call.action === 'ListAliases') return [on('kms:ListAliases', '*')];
      const keyTags = tagContext(lookupTags(registry, keyId ?? '', key(keyId ?? '')), 'aws:ResourceTag');
      if (call.action === 'CreateAlias' || call.action === 'DeleteAlias') {
        const alias = str('AliasName') ?? '';
        const requests = [on(`kms:${call.action}`, arn('kms', alias))];
        if (keyId) requests.push(on(`kms:${call.action}`, key(keyId), keyTags));
        return requests;
      }
      if (!keyId) return undefined;
      return [on(`kms:${call.action}`, key(keyId), { ...keyTags, ...(call.action === 'TagResource' ? requested : {}) })];
    }
    case 'secretsmanager': {
      if (call.action === 'ListSecrets') return [on('secretsmanager:ListSecrets', '*')];
      const name = str('Name') ?? str('SecretId') ?? '';
      const secret = name.startsWith('arn:') ? name : arn('secretsmanager', `secret:${name}-AbCdEf`);
      if (call.action === 'CreateSecret') {
        const requests = [on('secretsmanager:CreateSecret', secret, requested)];
        if (hasTags) requests.push(on('secretsmanager:TagResource', secret, requested));
        return requests;
      }
      return [
        on(`secretsmanager:${call.action}`, secret, {
          ...tagContext(lookupTags(registry, name), 'aws:ResourceTag'),
          ...(call.action === 'TagResource' ? requested : {}),
        }),
      ];
    }
    case 'logs': {
      if (call.action === 'DescribeLogGroups') return [on('logs:DescribeLogGroups', '*')];
      const name =
        str('logGroupName') ??
        str('resourceArn')
          ?.replace(/^.*:log-group:/, '')
          .replace(/:\*$/, '') ??
        '';
      const group = arn('logs', `log-group:${name}`);
      const tags = tagContext(lookupTags(registry, name), 'aws:ResourceTag');
      if (call.action === 'CreateLogGroup') {
        const requests = [on('logs:CreateLogGroup', group, requested)];
        if (hasTags) requests.push(on('logs:TagResource', group, requested));
        return requests;
      }
      return [on(`logs:${call.action}`, group, { ...tags, ...(call.action === 'TagResource' ? requested : {}) })];
    }
    case 'es': {
      if (call.action === 'ListTags') {
        const domainArn = str('arn') ?? '*';
        return [on('es:ListTags', domainArn, tagContext(lookupTags(registry, domainArn.split('/').pop() ?? ''), 'aws:ResourceTag'))];
      }
      const name = str('DomainName') ?? (typeof p.ARN === 'string' ? p.ARN.split('/').pop() : undefined);
      if (!name) return call.action === 'DescribeDomains' ? [on('es:DescribeDomains', arn('es', 'domain/*'))] : undefined;
      const domain = arn('es', `domain/${name}`);
      if (call.action === 'CreateDomain') {
        const requests = [on('es:CreateDomain', domain, requested)];
        if (hasTags) requests.push(on('es:AddTags', domain, requested));
        return requests;
      }
      return [
        on(`es:${call.action}`, domain, { ...tagContext(lookupTags(registry, name), 'aws:ResourceTag'), ...(call.action === 'AddTags' ? requested : {}) }),
      ];
    }
    case 'scheduler': {
      // Service Authorization Reference (list_amazoneventbridgescheduler.html): schedules
      // are schedule/<group>/<name> and take no tags; groups take tags; creating or
      // changing a schedule passes its target's role to the scheduler.
      if (call.action === 'ListSchedules' || call.action === 'ListScheduleGroups') return [on(`scheduler:${call.action}`, '*')];
      const group = (name: string): string => arn('scheduler', `schedule-group/${name}`);
      if (call.action.endsWith('ScheduleGroup')) {
        const name = str('Name') ?? '';
        if (call.action === 'CreateScheduleGroup') {
          const requests = [on('scheduler:CreateScheduleGroup', group(name), requested)];
          if (hasTags) requests.push(on('scheduler:TagResource', group(name), requested));
          return requests;
        }
        return [on(`scheduler:${call.action}`, group(name), tagContext(lookupTags(registry, name), 'aws:ResourceTag'))];
      }
      if (['ListTagsForResource', 'TagResource', 'UntagResource'].includes(call.action)) {
        const resource = str('ResourceArn') ?? '';
        return [
          on(`scheduler:${call.action}`, resource, {
            ...tagContext(lookupTags(registry, resource.split('/').pop() ?? ''), 'aws:ResourceTag'),
            ...(call.action === 'TagResource' ? requested : {}),
          }),
        ];
      }
      const name = str('Name');
      if (!name || !call.action.endsWith('Schedule')) return undefined;
      const requests = [on(`scheduler:${call.action}`, arn('scheduler', `schedule/${str('GroupName') ?? 'default'}/${name}`))];
      const role = (p.Target as { RoleArn?: unknown } | undefined)?.RoleArn;
      if (typeof role === 'string') requests.push(on('iam:PassRole', role, { 'iam:PassedToService': 'scheduler.amazonaws.com' }));
      return requests;
    }
    case 'servicequotas': {
      // GetServiceQuota is authorised on the quota (resource type quota, optional, with
      // servicequotas:service); GetAWSDefaultServiceQuota takes no resource (Service
      // Authorization Reference, list_servicequotas.html).
      const service = str('ServiceCode');
      if (call.action === 'GetServiceQuota' && service) {
        return [on('servicequotas:GetServiceQuota', arn('servicequotas', `${service}/${str('QuotaCode') ?? ''}`), { 'servicequotas:service': service })];
      }
      return [on(`servicequotas:${call.action}`, '*')];
    }
    default:
      return undefined;
  }
}

function ec2Requests(
  call: LoggedCall,
  account: Account,
  registry: TagRegistry,
  on: (action: string, resource: string, context?: Record<string, string | string[]>) => IamRequest,
  arn: (service: string, resource: string, region?: string, acct?: string) => string,
  requested: Record<string, string | string[]>,
  hasTags: boolean,
): IamRequest[] | undefined {
  const action = `ec2:${call.action}`;
  if (/^(Describe|Get)/.test(call.action)) return [on(action, '*')];
  const resourceOf = (id: string): string => {
    const prefix = id.slice(0, id.lastIndexOf('-'));
    const type = EC2_TYPES[prefix];
    if (!type) throw new Error(`${call.action}: no EC2 resource type for ID ${id}`);
    return type === 'image' ? arn('ec2', `image/${id}`, account.region, '') : arn('ec2', `${type}/${id}`);
  };
  const existing = (id: string): IamRequest => on(action, resourceOf(id), tagContext(lookupTags(registry, id), 'aws:ResourceTag'));
  const requests: IamRequest[] = [];
  const created = EC2_CREATES[call.action];
  if (created) {
    requests.push(on(action, arn('ec2', `${created}/new`), requested));
    if (hasTags) requests.push(on('ec2:CreateTags', arn('ec2', `${created}/new`), { ...requested, 'ec2:CreateAction': call.action }));
  }
  if (call.action === 'CreateTags' || call.action === 'DeleteTags') {
    for (const id of strings(call.params, /^ResourceId\.\d+$/))
      requests.push(on(action, resourceOf(id), { ...tagContext(lookupTags(registry, id), 'aws:ResourceTag'), ...requested }));
    return requests;
  }
  // The existing resources the call names (parents of a create, targets of a change).
  const ids = new Set<string>();
  for (const [key, value] of Object.entries(call.params)) {
    if (typeof value !== 'string') continue;
    if (
      /^(VpcId|SubnetId|GroupId|SecurityGroupId\.\d+|InstanceId(\.\d+)?|RouteTableId|InternetGatewayId|NatGatewayId|AllocationId|ImageId|ReferencedGroupId|.*\.GroupId|SecurityGroupRuleId\.\d+)$/.test(
        key,
      )
    ) {
      if (/^(vpc|subnet|igw|rtb|nat|eipalloc|sg|i|ami)-/.test(value)) ids.add(value);
    }
  }
  // Disassociating is authorised on what the association joins (the address only: its
  // network interface belongs to the NAT gateway and is not modelled here).
  const association = call.params.AssociationId;
  if (typeof association === 'string') {
    const joined = registry.get(`${ASSOCIATION}${association}`);
    if (!joined) return undefined;
    for (const id of Object.keys(joined)) ids.add(id);
  }
  // A rule referencing another group is authorised on the group it is added to, not on the referenced one.
  if (/^(Authorize|Revoke)SecurityGroup/.test(call.action)) {
    const group = call.params.GroupId;
    for (const id of [...ids]) if (id !== group) ids.delete(id);
  }
  // Attaching the gateway and associating a table are authorised on both; a route only on its table.
  if (call.action === 'CreateRoute' || call.action === 'DeleteRoute') for (const id of [...ids]) if (!id.startsWith('rtb-')) ids.delete(id);
  for (const id of ids) requests.push(existing(id));
  if (call.action === 'RunInstances') {
    requests.push(on(action, arn('ec2', 'network-interface/new')), on(action, arn('ec2', 'volume/new'), requested));
    const key = call.params.KeyName;
    if (typeof key === 'string') requests.push(on(action, arn('ec2', `key-pair/${key}`)));
    const profile = call.params['IamInstanceProfile.Name'];
    if (typeof profile === 'string')
      requests.push(on('iam:PassRole', `arn:aws:iam::${account.id}:role/${profile}`, { 'iam:PassedToService': 'ec2.amazonaws.com' }));
  }
  if (!requests.length) return undefined;
  return requests;
}
