"""The registry of the public files COVER's demo, studies and golden tests read
(``cover data``, :mod:`cover.io.fetch`): each file's source repository at a pinned
commit, its path there and in the data folder (laid out like the project's shared
data), its sha256 and size, and its license. Data, not code: a new file is a new entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class DataFile:
    """One public file: where it comes from, what it must hash to, and its license."""

    name: str
    path: str  # inside the data folder, e.g. "qvhighlights/annotations/x.jsonl"
    repo: str  # "owner/name" on GitHub
    commit: str
    repo_path: str
    sha256: str
    size: int
    license: str
    what: str

    @property
    def source_url(self) -> str:
        """The file in its repository at the pinned commit."""
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.repo_path}"

    @property
    def raw_url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.repo_path}"

    def url(self, base: str | None = None) -> str:
        """The raw URL, or the mirror's (``$COVER_DATA_URL`` or ``base``) when set."""
        base = base if base is not None else os.environ.get("COVER_DATA_URL")
        return f"{base.rstrip('/')}/{self.path}" if base else self.raw_url


_MDETR = ("jayleicn/moment_detr", "b7e553ac3b0c898ee6b85e03ee507c064eab89ca")
_QD = ("wjun0830/QD-DETR", "56c63b2c75c5673dfe693f3ae9438f5fc1f1679a")
_LA = ("dgymjol/qd_la_detr", "61d3f592bcb6db9bbd258c933a0b2f8918c5f31e")
_VSL = ("26hzhang/VSLNet", "3793c625f2e251a5f19a0d59f0c83b12e386f808")
_MDIFF = ("IMCCretrieval/MomentDiff", "91fb46edc5f69e1a3603d774fa8b945fecd9f881")
_DIST = ("josephzpng/DisTime", "2483e4afd7892568b4bd874b56836f707e334c0d")
_SHUF = ("haojc/ShufflingVideosForTSG", "df562a04424fecfa7f126632d6342f50bb33a81b")
_QVH_LICENSE = "CC BY-NC-SA 4.0 (QVHighlights annotations)"
_CHARADES_LICENSE = "Charades: non-commercial research use"
_NONE_STATED = "none stated (research use only)"
_PRED_LICENSE = "MIT (code repository); predictions on QVHighlights, CC BY-NC-SA 4.0"

#: Every file COVER's demo, studies and golden tests read, by name.
REGISTRY: dict[str, DataFile] = {f.name: f for f in [
    DataFile("qvh-val-gt", "qvhighlights/annotations/highlight_val_release.jsonl", *_MDETR,
             "data/highlight_val_release.jsonl",
             "f668a1eaea156ec5315e14718999cea043a8cf948d3cafbd8e8d655318c3cd02", 821101,
             _QVH_LICENSE, "QVHighlights val ground truth (1550 queries)"),
    DataFile("qvh-test-gt", "qvhighlights/annotations/highlight_test_with_gt.jsonl", *_MDETR,
             "data/highlight_test_with_gt.jsonl",
             "bd50ec6bb5dd3f72571126ba5fdc7418efdd9219a9487984e483a02e2ce5d493", 824658,
             _QVH_LICENSE, "QVHighlights test ground truth (1542 queries; public since the "
             "benchmark server closed): the one labelled test split"),
    DataFile("moment-detr-sample", "qvhighlights/moment_detr/sample_val_preds.jsonl", *_MDETR,
             "standalone_eval/sample_val_preds.jsonl",
             "df3227ef84985db846f102e75cda43b5f9f962d12b95b990028eed88f1901b40", 2399408,
             _PRED_LICENSE, "Moment-DETR sample val predictions"),
    DataFile("moment-detr-clip",
             "qvhighlights/moment_detr/inference_hl_val_test_code_preds.jsonl", *_MDETR,
             "run_on_video/moment_detr_ckpt/inference_hl_val_test_code_preds.jsonl",
             "4b38328e316be63a2e7ca667566a76223ffe7b349a0b2edce66f028673f393ab", 2443100,
             _PRED_LICENSE, "Moment-DETR (CLIP-only checkpoint) val predictions"),
    DataFile("qd-detr-video", "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
             *_QD, "results/video_checkpoint/best_hl_val_preds.jsonl",
             "0331562d7d1f00aa32c8b7afbde1e84bc64c0a347983187996c80b1627d902f0", 1968913,
             _PRED_LICENSE, "QD-DETR (video) val predictions: the demo's grounder"),
    DataFile("qd-detr-audio", "qvhighlights/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
             *_QD, "results/audio_checkpoint/best_hl_val_preds.jsonl",
             "177cbedb24f4662673b5aaf210206735a29a348760bc0f022de31a80d9c3df94", 1967849,
             _PRED_LICENSE, "QD-DETR (video+audio) val predictions"),
    DataFile("qd-detr-clip", "qvhighlights/qd_detr/onlyclip_best_hl_val_preds.jsonl", *_QD,
             "results/QDDETR_onlyclip/best_hl_val_preds.jsonl",
             "05f2503a642266740575a9bc058da3c5919c737024fe1607d7007f783c73acdd", 1960420,
             _PRED_LICENSE, "QD-DETR (CLIP-only) val predictions"),
    DataFile("eatr", "qvhighlights/eatr/best_hl_val_preds.jsonl",
             "jinhyunj/EaTR", "384f09396a32741a73106d2e147bde54cbcce48f",
             "eatr_ckpt/best_hl_val_preds.jsonl",
             "12b47c9bd916ee30ca1fc10fc45e322d8fa5430a8c526ed1ffa8060f2e17bc6f", 2424193,
             _PRED_LICENSE, "EaTR val predictions"),
    DataFile("univtg", "qvhighlights/univtg/univtg_val_preds.jsonl",
             "showlab/UniVTG", "32659ac7aeba21742a63274f30eba785fc57e247",
             "plot/qvhl/univtg.jsonl",
             "66575c9dbc57d92ca7e4148dc2178194aaefa4732d356eb3abdb642f295025f2", 3025612,
             _PRED_LICENSE, "UniVTG val predictions"),
    DataFile("vtg-gpt", "qvhighlights/vtg_gpt/infer_val.jsonl",
             "YoucanBaby/VTG-GPT", "9d6606140edb36c89ea5ce96a0dc5e50361d108a",
             "outputs/qvhighlights/infer_val.jsonl",
             "2bca60915dc6e900a6d81ae00b5f1c316d98dc2d6b60a1012c1a0bb81a0a8f72", 1683890,
             _PRED_LICENSE, "VTG-GPT (zero-shot) val predictions"),
    DataFile("la-detr-qvh-val", "qvhighlights/la_detr/best_hl_val_preds.jsonl", *_LA,
             "results/ours/best_hl_val_preds.jsonl",
             "0e7c061b5632502b1855e8f93892790e242244ee48d21c720d5d80621f0cdb15", 3014703,
             _NONE_STATED, "LA-DETR val predictions"),
    DataFile("la-detr-charades", "charades_sta/la_detr/hl_test_submission.jsonl", *_LA,
             "results_charades_sta/ours/hl_test_submission.jsonl",
             "5af10caeb533aeb9675c77000ebb3fd9f672d72c07ffb934e898c1cbe7bdf1fb", 3525120,
             _NONE_STATED, "LA-DETR Charades-STA test predictions"),
    DataFile("charades-test-gt", "lighthouse/charades_test_release.jsonl",
             "line/lighthouse", "d095eaa552cecef240897a8b750306b3b2a08740",
             "data/charades/charades_test_release.jsonl",
             "13d6e9152794d87bb501a827edcbe69e5c0428f0af60e926e6b87e4f452ad5b2", 488238,
             "Apache-2.0 (repository); Charades: non-commercial",
             "Charades-STA test ground truth, Lighthouse jsonl (3720 queries)"),
    DataFile("charades-test-text", "charades_sta/annotations/charades_sta_test.txt", *_VSL,
             "data/dataset/charades/charades_sta_test.txt",
             "fab341679c20b0917173dcffffde367a71113fe63f3a645558cef2ebfbfefb55", 186686,
             "MIT (repository); " + _CHARADES_LICENSE, "Charades-STA test ground truth, the "
             "original text file (3720 queries; its durations in charades.json beside it)"),
    DataFile("charades-durations", "charades_sta/annotations/charades.json", *_VSL,
             "data/dataset/charades/charades.json",
             "42de4feae0ae2705d847776393637edafce6d8d47cfbf9ed19b8cd182d370155", 1803980,
             "MIT (repository); " + _CHARADES_LICENSE,
             "Charades video durations (9848 videos)"),
    DataFile("anet-val2-gt", "activitynet_captions/annotations/val_2.json", *_VSL,
             "data/dataset/activitynet/val_2.json",
             "37df50829c22e913b369af18c0bfb82277257f037082df3781d4dfc20c35f80d", 1727033,
             "MIT (repository); ActivityNet Captions: research use",
             "ActivityNet Captions val_2 ground truth (17031 queries)"),
    DataFile("anet-cd-ood-gt", "activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl",
             *_MDIFF, "data/anet_cd/anet_test_ood_momentdiff.jsonl",
             "bcc43cb523e61c730d5ccbd514bcb40a007783e3850b41b7f9fc9fc4eb53a692", 2412479,
             "MIT (repository); ActivityNet Captions: research use",
             "ActivityNet-CD test_ood ground truth (13578 queries)"),
    DataFile("charades-cd-ood-gt", "charades_cd/momentdiff_repo/charades_test_ood.json",
             *_MDIFF, "data/charades_cd/charades_test_ood.json",
             "a73847ada163bfcbbad2f616311098e6139b63ca6f93f537ca41b01b81961166", 500447,
             "MIT (repository); " + _CHARADES_LICENSE,
             "Charades-CD test_ood ground truth (3375 queries)"),
    DataFile("distime-charades",
             "charades_sta/distime/DisTime-InternVL2_5-8B_charades_test_results.json", *_DIST,
             "internvl_chat/results/Charades-STA/8B/results.json",
             "2853cb3fc8d6c08b1c991e5133a3d72ae56239952f4cd1ceaa77d7d84faf3fe5", 308519,
             "MIT", "DisTime (InternVL2.5-8B video-LLM) Charades-STA test predictions"),
    DataFile("distime-qvh", "qvhighlights/distime/DisTime-InternVL2_5-8B_qvh_val_results.json",
             *_DIST, "internvl_chat/results/QVHighlight/8B/results.json",
             "48ec337497c8350fbb78308170043bd8e5088b9aedea8c23bdab66e559c3e971", 284243,
             "MIT; " + _QVH_LICENSE, "DisTime (InternVL2.5-8B video-LLM) QVHighlights val "
             "predictions"),
    DataFile("distime-anet",
             "activitynet_captions/distime/DisTime-InternVL2_5-8B_anet_val2_results.json",
             *_DIST, "internvl_chat/results/ANet-Caption/8B/results.json",
             "eb600e152797bbf6604ab5572c1a64467daefd5e8c9441321e2d4c1df0eb4137", 2884844,
             "MIT", "DisTime (InternVL2.5-8B video-LLM) ActivityNet Captions val_2 predictions"),
    DataFile("tgn-charades", "charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json",
             "JaywongWang/TGN", "858899a63b75e67ee7fbfab08f3e08dedf4901e6",
             "results/charades/predict_proposals_test_nms_0.55.json",
             "4a559f0b48862eca2cc55fd428b0a6899a8792b6bb7035ff454f8330c04414c9", 2181054,
             _NONE_STATED, "TGN Charades-STA test scored proposals (top 10)"),
    DataFile("shuffling-anet-cd",
             "activitynet_cd/shuffling_videos_mdc/prediction_results_test_ood.json", *_SHUF,
             "grounding/ckp/anet_cd/prediction_results_test_ood.json",
             "ada42699ddd2cc20dd8f5edb167b90ff3a2aa3ab872339e8d05af8f518bb7a71", 3052931,
             _NONE_STATED, "Shuffling Videos ActivityNet-CD test_ood predictions"),
    DataFile("shuffling-charades-cd",
             "charades_cd/shuffling_videos_mdc/prediction_results_test_ood.json", *_SHUF,
             "grounding/ckp/charades_cd/prediction_results_test_ood.json",
             "a3c32bb498ab6baa01540c56557a46b20e3ecb4788236174f21e6aa886d49fce", 628528,
             _NONE_STATED, "Shuffling Videos Charades-CD test_ood predictions"),
    DataFile("qd-detr-video-last",
             "qvhighlights/latest_epoch/qd_detr_video_checkpoint__latest_hl_val_preds.jsonl",
             *_QD, "results/video_checkpoint/latest_hl_val_preds.jsonl",
             "aef6782ac9929a918725e8889ff7b27af612966efc05d89949c541156d6c2cd1", 1968887,
             _PRED_LICENSE, "QD-DETR (video) last-epoch val predictions"),
    DataFile("qd-detr-audio-last",
             "qvhighlights/latest_epoch/qd_detr_audio_checkpoint__latest_hl_val_preds.jsonl",
             *_QD, "results/audio_checkpoint/latest_hl_val_preds.jsonl",
             "9bb5dcbb9bdf1ea085648fe23794b2692224decfbd779c3bc1b16d08e809d61a", 1973660,
             _PRED_LICENSE, "QD-DETR (video+audio) last-epoch val predictions"),
    DataFile("qd-detr-clip-last",
             "qvhighlights/latest_epoch/qd_detr_onlyclip__latest_hl_val_preds.jsonl",
             *_QD, "results/QDDETR_onlyclip/latest_hl_val_preds.jsonl",
             "2e9303a33d4c2dfb1b6026cb615a3615f82db77f6ae1c6c7e63ae1c79dde8e7b", 1966395,
             _PRED_LICENSE, "QD-DETR (CLIP-only) last-epoch val predictions"),
    DataFile("eatr-last", "qvhighlights/latest_epoch/eatr__latest_hl_val_preds.jsonl",
             "jinhyunj/EaTR", "384f09396a32741a73106d2e147bde54cbcce48f",
             "eatr_ckpt/latest_hl_val_preds.jsonl",
             "fe4bec4f70cf538c4ddfec6d5b3a65be28f8f33f2d55d7ac548157f3eceb2cdc", 2398557,
             _PRED_LICENSE, "EaTR last-epoch val predictions"),
]}
