#ifndef HKD_CNATS_SHIM_H
#define HKD_CNATS_SHIM_H
// nats.c 3.4 (Debian libnats-dev) for Swift. Its configuration structs hold C string arrays and must be
// initialised by *_Init calls before their fields are set; the few configurations hkd uses are built here in
// static inline functions, so the Swift side passes plain values.
#include <nats/nats.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/// Connects to one of the `count` server URLs `servers` (natsOptions_SetURL does not take a list in nats.c 3.4),
/// reconnecting for ever (every `reconnectWaitMs`) after a lost connection; `timeoutMs` bounds each connection
/// attempt. The server is pinged every `pingIntervalMs`, and a connection with two pings unanswered is taken
/// for lost (a server cut off without a reset is left within seconds, not after nats.c's default minutes).
static inline natsStatus hk_nats_connect(natsConnection **nc, const char **servers, int count, int64_t timeoutMs,
                                         int64_t reconnectWaitMs, int64_t pingIntervalMs) {
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = natsOptions_SetServers(opts, servers, count);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, timeoutMs);
    if (s == NATS_OK) s = natsOptions_SetPingInterval(opts, pingIntervalMs);
    if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts, 2);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, reconnectWaitMs);
    if (s == NATS_OK) s = natsConnection_Connect(nc, opts);
    natsOptions_Destroy(opts);
    return s;
}

/// The JetStream context of `nc`, whose requests wait `waitMs` for their reply.
static inline natsStatus hk_nats_jetstream(jsCtx **js, natsConnection *nc, int64_t waitMs) {
    jsOptions opts;
    natsStatus s = jsOptions_Init(&opts);
    if (s != NATS_OK) return s;
    opts.Wait = waitMs;
    return natsConnection_JetStream(js, nc, &opts);
}

/// Creates the file-stored stream `name` holding the one subject `subject` with `replicas` copies, keeping every
/// message (limits policy, no limits). A stream of that name that exists already is left as it is.
static inline natsStatus hk_js_add_stream(jsCtx *js, const char *name, const char *subject, int64_t replicas,
                                          jsErrCode *errCode) {
    jsStreamConfig cfg;
    natsStatus s = jsStreamConfig_Init(&cfg);
    if (s != NATS_OK) return s;
    const char *subjects[1] = {subject};
    cfg.Name = name;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Replicas = replicas;
    jsStreamInfo *si = NULL;
    s = js_AddStream(&si, js, &cfg, NULL, errCode);
    if (s == NATS_OK) jsStreamInfo_Destroy(si);
    if (s != NATS_OK && errCode != NULL && *errCode == JSStreamNameExistErr) {
        *errCode = 0;
        s = NATS_OK;
    }
    return s;
}

/// The first and last sequences of stream `name` (last 0 when it is empty), how many messages and bytes it
/// holds, and its replicas.
static inline natsStatus hk_js_stream_state(jsCtx *js, const char *name, uint64_t *firstSeq, uint64_t *lastSeq,
                                            uint64_t *messages, uint64_t *bytes, int64_t *replicas,
                                            jsErrCode *errCode) {
    jsStreamInfo *si = NULL;
    natsStatus s = js_GetStreamInfo(&si, js, name, NULL, errCode);
    if (s != NATS_OK) return s;
    *firstSeq = si->State.FirstSeq;
    *lastSeq = si->State.LastSeq;
    *messages = si->State.Msgs;
    *bytes = si->State.Bytes;
    *replicas = si->Config != NULL ? si->Config->Replicas : 0;
    jsStreamInfo_Destroy(si);
    return NATS_OK;
}

/// Opens the key-value bucket `bucket`; creates it when it does not exist (file storage, `replicas` copies,
/// `history` revisions per key, entries expiring `ttlNanoseconds` after their last write, at least 100 ms;
/// 0: never). An existing bucket is opened as it is.
static inline natsStatus hk_kv_bucket(kvStore **kv, jsCtx *js, const char *bucket, int64_t ttlNanoseconds,
                                      int replicas, uint8_t history) {
    natsStatus s = js_KeyValue(kv, js, bucket);
    if (s != NATS_NOT_FOUND) return s;
    kvConfig cfg;
    s = kvConfig_Init(&cfg);
    if (s != NATS_OK) return s;
    cfg.Bucket = bucket;
    cfg.History = history;
    cfg.TTL = ttlNanoseconds;
    cfg.Replicas = replicas;
    cfg.StorageType = js_FileStorage;
    s = js_CreateKeyValue(kv, js, &cfg);
    // Another node may have created it meanwhile.
    if (s != NATS_OK) s = js_KeyValue(kv, js, bucket);
    return s;
}

/// Publishes `data` to `subject` with the header `Nats-Expected-Last-Sequence: expectedLast` (also when it is 0,
/// which nats.c's jsPubOptions cannot express) and waits up to `waitMs` for JetStream's acknowledgement; sets
/// `sequence` to the stream sequence the message got.
static inline natsStatus hk_js_publish_after(jsCtx *js, const char *subject, const void *data, int length,
                                             uint64_t expectedLast, int64_t waitMs, uint64_t *sequence,
                                             jsErrCode *errCode) {
    natsMsg *msg = NULL;
    natsStatus s = natsMsg_Create(&msg, subject, NULL, (const char *)data, length);
    if (s != NATS_OK) return s;
    char expected[24];
    snprintf(expected, sizeof expected, "%llu", (unsigned long long)expectedLast);
    s = natsMsgHeader_Set(msg, "Nats-Expected-Last-Sequence", expected);
    jsPubOptions opts;
    if (s == NATS_OK) s = jsPubOptions_Init(&opts);
    jsPubAck *ack = NULL;
    if (s == NATS_OK) {
        opts.MaxWait = waitMs;
        s = js_PublishMsg(&ack, js, msg, &opts, errCode);
    }
    if (s == NATS_OK) {
        *sequence = ack->Sequence;
        jsPubAck_Destroy(ack);
    }
    natsMsg_Destroy(msg);
    return s;
}

/// Publishes `data` to `subject` provided the last message on `subject` in its stream is at stream sequence
/// `expectedLastSubjectSeq` (0: provided there is none), and sets `sequence` to the stream sequence it got.
static inline natsStatus hk_js_publish_after_subject(jsCtx *js, const char *subject, const void *data, int length,
                                                     uint64_t expectedLastSubjectSeq, uint64_t *sequence,
                                                     jsErrCode *errCode) {
    jsPubOptions opts;
    natsStatus s = jsPubOptions_Init(&opts);
    if (s != NATS_OK) return s;
    if (expectedLastSubjectSeq == 0) {
        opts.ExpectNoMessage = true;
    } else {
        opts.ExpectLastSubjectSeq = expectedLastSubjectSeq;
    }
    jsPubAck *ack = NULL;
    s = js_Publish(&ack, js, subject, data, length, &opts, errCode);
    if (s == NATS_OK) {
        *sequence = ack->Sequence;
        jsPubAck_Destroy(ack);
    }
    return s;
}

/// Removes the messages of stream `stream` on `subject` (NULL: every subject) whose sequence is below
/// `belowSequence`.
static inline natsStatus hk_js_purge_below(jsCtx *js, const char *stream, const char *subject, uint64_t belowSequence,
                                           jsErrCode *errCode) {
    jsOptions opts;
    natsStatus s = jsOptions_Init(&opts);
    if (s != NATS_OK) return s;
    opts.Stream.Purge.Subject = subject;
    opts.Stream.Purge.Sequence = belowSequence;
    return js_PurgeStream(js, stream, &opts, errCode);
}

/// Subscribes to `subject` of stream `stream` through an ordered consumer (ephemeral, no acknowledgements, in
/// stream order with flow control) delivering from stream sequence `startSequence` on: the fast way to read a
/// stream, a push of many messages instead of one request per message. Messages come with
/// `natsSubscription_NextMsg`; `hk_msg_stream_sequence` gives each one's stream sequence.
static inline natsStatus hk_js_ordered_subscribe(natsSubscription **sub, jsCtx *js, const char *stream,
                                                 const char *subject, uint64_t startSequence, jsErrCode *errCode) {
    jsSubOptions so;
    natsStatus s = jsSubOptions_Init(&so);
    if (s != NATS_OK) return s;
    so.Stream = stream;
    so.Ordered = true;
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = startSequence;
    return js_SubscribeSync(sub, js, subject, NULL, &so, errCode);
}

/// The stream sequence of a message delivered by a JetStream consumer.
static inline natsStatus hk_msg_stream_sequence(natsMsg *msg, uint64_t *sequence) {
    jsMsgMetaData *meta = NULL;
    natsStatus s = natsMsg_GetMetaData(&meta, msg);
    if (s == NATS_OK) {
        *sequence = meta->Sequence.Stream;
        jsMsgMetaData_Destroy(meta);
    }
    return s;
}

/// Whether JetStream answers on `js` within `waitMs`: its account information, which in a cluster only the
/// metadata leader gives, so a cluster still electing one does not answer yet.
static inline natsStatus hk_js_ready(jsCtx *js, int64_t waitMs, jsErrCode *errCode) {
    jsOptions opts;
    natsStatus s = jsOptions_Init(&opts);
    if (s != NATS_OK) return s;
    opts.Wait = waitMs;
    jsAccountInfo *ai = NULL;
    s = js_GetAccountInfo(&ai, js, &opts, errCode);
    if (s == NATS_OK) jsAccountInfo_Destroy(ai);
    return s;
}

/// Raises the replicas of stream `name` to `replicas` when it has fewer (its configuration otherwise unchanged);
/// sets `previous` to the count it had.
static inline natsStatus hk_js_raise_replicas(jsCtx *js, const char *name, int64_t replicas, int64_t *previous,
                                              jsErrCode *errCode) {
    jsStreamInfo *si = NULL;
    natsStatus s = js_GetStreamInfo(&si, js, name, NULL, errCode);
    if (s != NATS_OK) return s;
    *previous = si->Config != NULL ? si->Config->Replicas : 0;
    if (si->Config != NULL && si->Config->Replicas < replicas) {
        si->Config->Replicas = replicas;
        jsStreamInfo *updated = NULL;
        s = js_UpdateStream(&updated, js, si->Config, NULL, errCode);
        if (s == NATS_OK) jsStreamInfo_Destroy(updated);
    }
    jsStreamInfo_Destroy(si);
    return s;
}

/// The number of servers in the connection's pool: the URLs given and those the servers announced.
static inline int hk_nats_known_servers(natsConnection *nc) {
    char **servers = NULL;
    int count = 0;
    if (natsConnection_GetServers(nc, &servers, &count) != NATS_OK) return 0;
    for (int i = 0; i < count; i++) free(servers[i]);
    free(servers);
    return count;
}

#endif
