package dev.lease.fence.http;

import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/** The status and body of an HTTP error, whichever client threw it. */
record HttpStatuses(int status, String body) {

    static HttpStatuses of(Throwable thrown) {
        if (thrown instanceof RestClientResponseException rest) {
            return new HttpStatuses(rest.getStatusCode().value(), rest.getResponseBodyAsString());
        }
        if (thrown instanceof WebClientResponseException web) {
            return new HttpStatuses(web.getStatusCode().value(), web.getResponseBodyAsString());
        }
        throw new AssertionError("not an HTTP error answer: " + thrown, thrown);
    }
}
