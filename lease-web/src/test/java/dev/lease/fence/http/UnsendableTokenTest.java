package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.testing.TestLeases;

/**
 * In-memory leases have tokens an RFC 9651 Integer cannot hold: the auto-configured clients send their requests
 * without the header rather than failing calls to services that do not fence (a fenced one answers 428).
 */
class UnsendableTokenTest {

    @Test
    void aTokenTooLargeForTheHeaderIsNotSentAndTheCallStillGoes() throws Exception {
        AtomicReference<HttpHeaders> sent = new AtomicReference<>();
        try (TestLeases leases = TestLeases.inMemory()) {
            String answer = leases.execute(LeaseSpec.of("in-memory", LeaseKind.CORRECTNESS), lease -> {
                assertThat(lease.token().value()).isGreaterThan(FencingTokenHeader.MAX_TOKEN);
                MockClientHttpRequest request = new MockClientHttpRequest(HttpMethod.POST, URI.create("http://x/y"));
                try (var response = new FencingTokenRequestInterceptor().intercept(request, new byte[0],
                        (req, body) -> {
                            sent.set(req.getHeaders());
                            return new MockClientHttpResponse("ok".getBytes(), HttpStatus.OK);
                        })) {
                    return new String(response.getBody().readAllBytes());
                }
            });
            assertThat(answer).isEqualTo("ok");
        }
        assertThat(sent.get().containsHeader(FencingTokenHeader.NAME)).isFalse();
    }
}
