// The port to a community platform (docs/architecture.md, "The community platform"). The fishpi adapter and the simulator
// are its first implementations; another platform is another adapter.
//
// Failures are thrown as the domain's platform errors (src/domain/errors.ts):
// - PlatformRejectedError: the platform answered and refused (its `code:-1` and message);
// - PlatformUnavailableError: connection refused, HTTP error, unparseable answer (`sent` says
//   whether the request may have reached the platform);
// - PlatformTimeoutError: no answer within the configured timeout.

export interface PlatformUser {
  oId: string;
  /** Current user name: the platform's admin endpoints take this, and users can rename. */
  userName: string;
  nickname: string;
  avatar: string;
}

export interface PointsSource {
  /** [A-Za-z0-9_.-]{1,64} */
  appId: string;
  /** ≤ 40 characters */
  appName: string;
  scene: 'payment' | 'point_issue' | 'refund' | 'transfer';
  /** [A-Za-z0-9_:.-]{1,128}: an end-to-end idempotency key on newer platform builds. */
  requestId: string;
}

export type ItemBag = Record<string, number>;

export interface OpenIdRequest {
  /** Where the platform sends the browser back; must start with `realm`. */
  returnTo: string;
  realm: string;
}

export interface CommunityPlatform {
  /** The user with this oId, or null when the platform does not know it. */
  getUser(oId: string): Promise<PlatformUser | null>;
  /** Resolves with the platform's message on success. */
  editPoints(input: { userName: string; point: number; memo: string; source?: PointsSource }): Promise<string>;
  giveMedal(input: { userName: string; name: string; description: string; attr: string; data: string }): Promise<string>;
  removeMedal(input: { userName: string; name: string }): Promise<string>;
  queryItems(userName: string): Promise<ItemBag>;
  /** Resolves with the platform's message and the bag after the edit. */
  editItems(input: { userName: string; item: string; sum: number }): Promise<{ message: string; bag: ItemBag }>;
  liveness(userName: string): Promise<number>;
  /** URL of the platform's OpenID 2.0 sign-in page for this request. */
  openIdLoginUrl(request: OpenIdRequest): string;
  /**
   * Asks the platform whether an assertion it sent us is genuine (check_authentication).
   * `params` are the `openid.*` query parameters exactly as received.
   */
  verifyAssertion(params: Record<string, string>): Promise<boolean>;
  /** The platform's OpenID endpoint URL (`openid.op_endpoint` must equal it). */
  readonly openIdEndpoint: string;
  /** Regex of a claimed identity whose first group is the oId. */
  readonly identityPattern: RegExp;
  /** Releases pooled connections; called once at shutdown. */
  close(): void;
}
