<?php
// What the Swoole targets serve on their port, from TLS_CERT, TLS_KEY and
// HTTP_PROTOCOL (docs/contract.md, "Protocols"): cleartext HTTP/1.1, HTTPS,
// HTTP/2 over TLS by ALPN, or cleartext HTTP/2 by prior knowledge.

declare(strict_types=1);

namespace Corobench\Swoole;

/** An environment the target cannot serve; the message names the variable. */
final class ProtocolError extends \InvalidArgumentException
{
}

final class Protocols
{
    private function __construct(
        public readonly string $protocol,
        public readonly ?string $certFile,
        public readonly ?string $keyFile,
    ) {
    }

    /** From the environment's values (null or '' when unset). */
    public static function fromEnvironment(?string $cert, ?string $key, ?string $protocol): self
    {
        $cert = $cert === '' ? null : $cert;
        $key = $key === '' ? null : $key;
        $protocol = $protocol === null || $protocol === '' ? 'http/1.1' : $protocol;
        if (($cert === null) !== ($key === null)) {
            throw new ProtocolError('TLS_CERT and TLS_KEY go together: set both (PEM files) or neither');
        }
        foreach (['TLS_CERT' => $cert, 'TLS_KEY' => $key] as $name => $path) {
            if ($path !== null && !is_readable($path)) {
                throw new ProtocolError("$name names $path, which cannot be read");
            }
        }
        $tls = $cert !== null;
        if ($tls) {
            self::checkPair($cert, $key);
        }
        if (!in_array($protocol, ['http/1.1', 'h2', 'h2c'], true)) {
            throw new ProtocolError("HTTP_PROTOCOL must be http/1.1, h2 or h2c, got '$protocol'");
        }
        if ($protocol === 'h2' && !$tls) {
            throw new ProtocolError('HTTP_PROTOCOL=h2 is HTTP/2 over TLS: it needs TLS_CERT and TLS_KEY (h2c is the cleartext one)');
        }
        if ($protocol === 'h2c' && $tls) {
            throw new ProtocolError('HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY (h2 is the one over TLS)');
        }
        return new self($protocol, $cert, $key);
    }

    /** Swoole reads the files only at the first handshake: refuse a bad pair at start instead. */
    private static function checkPair(string $cert, string $key): void
    {
        if (!function_exists('openssl_x509_read')) {
            return;
        }
        $certificate = @openssl_x509_read((string) file_get_contents($cert));
        if ($certificate === false) {
            throw new ProtocolError("TLS_CERT names $cert, which holds no PEM certificate");
        }
        $privateKey = @openssl_pkey_get_private((string) file_get_contents($key));
        if ($privateKey === false) {
            throw new ProtocolError("TLS_KEY names $key, which holds no PEM private key");
        }
        if (!openssl_x509_check_private_key($certificate, $privateKey)) {
            throw new ProtocolError("TLS_KEY ($key) is not the key of the certificate in TLS_CERT ($cert)");
        }
    }

    public function tls(): bool
    {
        return $this->certFile !== null;
    }

    /** What the log line says the port speaks. */
    public function describe(): string
    {
        return match (true) {
            $this->protocol === 'h2c' => 'cleartext HTTP/2 (h2c) and HTTP/1.1',
            $this->tls() => 'HTTPS (ALPN h2 and http/1.1)',
            default => 'HTTP/1.1',
        };
    }

    /**
     * The listening socket's settings beyond the body limit, which accepted
     * connections inherit. Over TLS, h2 is offered by ALPN beside http/1.1
     * whatever HTTP_PROTOCOL says: a client offering only http/1.1 gets it.
     *
     * @return array<string, mixed>
     */
    public function socketSettings(int $tlsVersions): array
    {
        if (!$this->tls()) {
            return $this->protocol === 'h2c' ? ['open_http2_protocol' => true] : [];
        }
        return [
            'open_ssl' => true,
            'ssl_cert_file' => $this->certFile,
            'ssl_key_file' => $this->keyFile,
            'ssl_protocols' => $tlsVersions,
            'open_http2_protocol' => true,
        ];
    }
}
